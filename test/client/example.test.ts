import t from 'tap'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { messages } from '../../lib/index.js'
import { createClient, type FetchLike } from '../../lib/client/index.js'
import { createExample } from '../../example/app.js'
import { accountMessages } from '../../example/services/account.js'
import { signInRequired, taskNotFound } from '../../example/services/tasks.js'
import type { ExampleServices } from '../../example/services/index.js'
import { examplePglite } from '../helpers/pglite.js'

// The example app through the typed client, in-process (app.fetch): accounts, cookie auth,
// protected actions, attachments. The browser side is test/example-browser.test.ts.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const empty = {}
const attachmentsDir = mkdtempSync(join(tmpdir(), 'fastify-actions-example-'))
t.teardown(() => rmSync(attachmentsDir, { recursive: true, force: true }))

const example = await createExample({ PGLITE_DIR: 'memory://', JWT_SECRET: 'example-test', ATTACHMENTS_DIR: attachmentsDir }, { database: await examplePglite() })
t.teardown(() => example.close())
const app = example.server.rest!.app

/** A client with a cookie jar of its own, as a browser tab would have. */
function browserLike() {
  const jar = { cookie: '', setCookie: [] as string[] }
  const fetch: FetchLike = async (input, init) => {
    const headers = new Headers(init?.headers)
    if (jar.cookie) headers.set('cookie', jar.cookie)
    const response = await app.fetch(input, { ...init, headers })
    jar.setCookie = response.headers.getSetCookie()
    for (const line of jar.setCookie) {
      const [pair] = line.split(';')
      jar.cookie = pair.endsWith('=') ? '' : pair
    }
    return response
  }
  return { jar, client: createClient<ExampleServices>({ baseUrl: 'http://localhost/api', fetch, credentials: 'include' }) }
}

t.test('sign up, the cookie, me, log out', async (t) => {
  const { jar, client } = browserLike()
  t.same(await client.account.me(), {
    ok: false,
    error: { status: false, message: messages.authFailed(messages.authReasons.missingToken), data: empty, httpStatus: 401 },
  })
  const signedUp = await client.account.signup({ username: 'ada', password: 'secret-1' })
  t.match(signedUp, { ok: true, value: { user: { id: UUID, username: 'ada' }, token: /^[\w-]+\.[\w-]+\.[\w-]+$/ } })
  t.match(jar.setCookie, [/^auth_token=[\w.-]+; Path=\/; HttpOnly; SameSite=Lax$/])
  t.match(await client.account.me(), { ok: true, value: { userId: UUID, username: 'ada' } })

  t.same(await client.account.signup({ username: 'ada', password: 'other-2' }), {
    ok: false,
    error: { status: false, message: accountMessages.taken, data: empty, httpStatus: 400 },
  })
  t.same(await client.account.logout(), { ok: true, value: { signedOut: true } })
  t.match(jar.setCookie, [/^auth_token=; .*Expires=Thu, 01 Jan 1970/])
  t.equal((await client.account.me()).ok, false)

  t.same(await client.account.login({ username: 'ada', password: 'wrong-1' }), {
    ok: false,
    error: { status: false, message: accountMessages.wrongCredentials, data: empty, httpStatus: 400 },
  })
  t.same(await client.account.login({ username: 'nobody', password: 'wrong-1' }), {
    ok: false,
    error: { status: false, message: accountMessages.wrongCredentials, data: empty, httpStatus: 400 },
  }, 'an unknown name answers like a wrong password')
  t.match(await client.account.login({ username: 'ada', password: 'secret-1' }), { ok: true, value: { user: { username: 'ada' } } })

  // The example reads the cookie only: API callers send the answered token as that cookie.
  const token = signedUp.ok ? signedUp.value.token : ''
  const bearer = createClient<ExampleServices>({ baseUrl: 'http://localhost/api', fetch: app.fetch as FetchLike, token })
  t.equal((await bearer.account.me()).ok, false, 'auth.method is cookie: a bearer header is not read')
  const cookie = createClient<ExampleServices>({ baseUrl: 'http://localhost/api', fetch: app.fetch as FetchLike, headers: { cookie: `auth_token=${token}` } })
  t.match(await cookie.account.me(), { ok: true, value: { username: 'ada' } }, 'API callers send the token as the cookie')
})

t.test('tasks.add and attachments: protected, owned, validated', async (t) => {
  const { client } = browserLike()
  t.same(await client.tasks.add({ title: 'x' }), {
    ok: false,
    error: { status: false, message: messages.authFailed(messages.authReasons.missingToken), data: empty, httpStatus: 401 },
  })
  await client.account.signup({ username: 'bea', password: 'secret-2' })
  const added = await client.tasks.add({ title: 'Paint the fence', notes: 'green' })
  if (!added.ok) return t.fail(added.error.message)
  t.match(added.value, { id: UUID, title: 'Paint the fence', notes: 'green', done: false, ownerId: UUID })
  t.type(added.value.createdAt, 'string')

  const uploaded = await client.upload('tasks', 'attach', {
    files: { file: [{ data: Buffer.from('two coats'), name: 'plan.txt' }, new File(['%PDF-1.4'], 'quote.pdf', { type: 'application/pdf' })] },
    fields: { taskId: added.value.id },
  })
  t.match(uploaded, {
    ok: true,
    value: {
      items: [
        { id: UUID, taskId: added.value.id, name: 'plan.txt', type: 'text/plain', size: 9 },
        { id: UUID, taskId: added.value.id, name: 'quote.pdf', type: 'application/pdf', size: 8 },
      ],
    },
  })
  t.equal(readdirSync(attachmentsDir).length, 2, 'the bytes are on disk')
  const listed = await client.tasks.attachments({ taskId: added.value.id })
  t.same(listed.ok && listed.value.items.map((file) => file.name), ['plan.txt', 'quote.pdf'])

  t.same(await client.upload('tasks', 'attach', { files: { file: new File(['#!'], 'run.sh', { type: 'text/x-sh' }) }, fields: { taskId: added.value.id } }), {
    ok: false,
    error: {
      status: false,
      message: messages.fileTypeNotAllowed,
      data: {
        error_category: 'validation',
        rejected: [{ name: 'run.sh', type: 'text/x-sh' }],
        allowed: { mimeTypes: ['image/png', 'image/jpeg', 'application/pdf', 'text/plain'], extensions: ['.png', '.jpg', '.jpeg', '.pdf', '.txt'] },
      },
      httpStatus: 400,
    },
  })

  // Somebody else's task is not found, and their list does not show it.
  const other = browserLike().client
  t.ok((await other.account.signup({ username: 'cyd', password: 'secret-3' })).ok)
  t.same(await other.upload('tasks', 'attach', { files: { file: { data: Buffer.from('x'), name: 'x.txt' } }, fields: { taskId: added.value.id } }), {
    ok: false,
    error: { status: false, message: taskNotFound, data: empty, httpStatus: 400 },
  })
  t.same(await other.tasks.attachments({}), { ok: true, value: { items: [] } })
  t.not(signInRequired, '')
})
