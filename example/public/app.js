// The example page: one ES module that calls the server through fastify-actions/client.
// The API's address comes from the page's own <meta name="api-base-url"> (never from the URL, so a
// link cannot point the login form at another server); a copy on another origin names the full URL.
import { createClient, isDeclaredError } from './client.js'

const meta = document.querySelector('meta[name="api-base-url"]')
const baseUrl = new URL(meta?.content || '/api', location.href).href
// The auth cookie is HttpOnly: the page never sees the token, the browser sends it (`credentials: 'include'`).
const client = createClient({ baseUrl, credentials: 'include', timeout: 15000 })

const $ = (id) => document.getElementById(id)

function show(text, isError = false) {
  $('status').textContent = text
  $('status').className = isError ? 'error' : ''
}

/** An Err's text: a declared error with its code (the action's own, e.g. NOT_FOUND), else with the validation details when there are some. */
function explain(error) {
  if (isDeclaredError(error)) return `${error.message} (${error.code})`
  const details = Array.isArray(error.data?.errors) ? error.data.errors.map((issue) => `${issue.path || 'input'} ${issue.message}`) : []
  return details.length > 0 ? `${error.message}: ${details.join(', ')}` : error.message
}

const size = (bytes) => (bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KiB`)

function renderTasks(tasks, files) {
  const list = $('tasks')
  list.replaceChildren()
  for (const task of tasks) {
    const item = document.createElement('li')
    item.dataset.id = task.id
    const title = document.createElement('div')
    title.className = 'title'
    title.textContent = task.title
    const attached = document.createElement('ul')
    attached.className = 'files'
    for (const file of files.filter((file) => file.taskId === task.id)) {
      const entry = document.createElement('li')
      entry.textContent = `${file.name} (${size(file.size)})`
      attached.append(entry)
    }
    const form = document.createElement('form')
    form.className = 'attach-form'
    const input = Object.assign(document.createElement('input'), { type: 'file', name: 'file', multiple: true, required: true })
    input.className = 'attach-file'
    input.accept = '.png,.jpg,.jpeg,.pdf,.txt'
    const button = Object.assign(document.createElement('button'), { type: 'submit', textContent: 'Attach' })
    button.className = 'attach'
    form.append(input, button)
    form.addEventListener('submit', async (event) => {
      event.preventDefault()
      show(`Uploading ${input.files.length} file(s)…`)
      const uploaded = await client.upload('tasks', 'attach', { files: { file: [...input.files] }, fields: { taskId: task.id } })
      if (!uploaded.ok) return show(explain(uploaded.error), true)
      show(`Attached ${uploaded.value.items.map((file) => file.name).join(', ')}`)
      await refresh()
    })
    // tasks.delete declares NOT_FOUND: deleted meanwhile (another tab), the page says so by its code.
    const remove = Object.assign(document.createElement('button'), { type: 'button', textContent: 'Delete' })
    remove.className = 'delete'
    remove.addEventListener('click', async () => {
      const deleted = await client.tasks.delete({ id: task.id })
      if (!deleted.ok && deleted.error.code !== 'NOT_FOUND') return show(explain(deleted.error), true)
      if (!deleted.ok) show(`Already gone: ${explain(deleted.error)}`, true)
      else show(`Deleted "${deleted.value.title}"`)
      await refresh()
    })
    item.append(title, attached, form, remove)
    list.append(item)
  }
}

async function refresh() {
  const me = await client.account.me()
  $('login-panel').hidden = me.ok
  $('tasks-panel').hidden = !me.ok
  if (!me.ok) return
  $('who').textContent = me.value.username ?? me.value.userId
  const [mine, files] = await Promise.all([client.tasks.mine(), client.tasks.attachments({})])
  if (!mine.ok) return show(explain(mine.error), true)
  if (!files.ok) return show(explain(files.error), true)
  renderTasks(mine.value.items, files.value.items)
}

$('login-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  const action = event.submitter?.value === 'signup' ? 'signup' : 'login'
  const answer = await client.account[action]({ username: $('username').value, password: $('password').value })
  if (!answer.ok) return show(explain(answer.error), true)
  show(`Welcome, ${answer.value.user.username}`)
  await refresh()
})

$('task-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  const added = await client.tasks.add({ title: $('new-title').value })
  if (!added.ok) return show(explain(added.error), true)
  $('new-title').value = ''
  show(`Added "${added.value.title}"`)
  await refresh()
})

$('logout').addEventListener('click', async () => {
  const answer = await client.account.logout()
  show(answer.ok ? 'Signed out' : explain(answer.error), !answer.ok)
  await refresh()
})

// The streaming action: `for await` over its events; Stop (or a new run) closes the request, and the
// server's generator stops (its context.signal aborts).
let running
$('stream-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  running?.close()
  $('stream-output').textContent = ''
  $('stream-status').textContent = 'Streaming…'
  const opened = await client.greetings.wave({ name: $('stream-name').value })
  if (!opened.ok) return ($('stream-status').textContent = explain(opened.error))
  const stream = (running = opened.value)
  try {
    for await (const { word, index } of stream) $('stream-output').textContent += index === 0 ? word : ` ${word}`
    const final = await stream.final
    if (running === stream) $('stream-status').textContent = final.ok ? `Done: ${final.value.words} words` : 'Stopped'
  } catch (error) {
    $('stream-status').textContent = `The stream failed: ${error.message}`
  }
})
$('stream-stop').addEventListener('click', () => running?.close())

await refresh()
document.body.dataset.ready = 'true'
