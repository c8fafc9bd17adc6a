import t from 'tap'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CHROMIUM, chromiumSkipReason } from './helpers/chromium.js'
import type { TapTest } from './helpers/postgres.js'
import { examplePglite } from './helpers/pglite.js'

// The example's web page in a real Chromium (driven by playwright-core): served by the example
// server, then from another loopback origin calling the API through CORS with the auth cookie.

const skip = chromiumSkipReason()
t.test('the example page in Chromium', skip ? { skip } : {}, run)

async function run(t: TapTest) {
  const { chromium } = await import('playwright-core')
  const { createExample, publicDir } = await import('../example/app.js')
  const { buildClientModule } = await import('../example/client-module.js')

  const attachmentsDir = mkdtempSync(join(tmpdir(), 'fastify-actions-attachments-'))
  t.teardown(() => rmSync(attachmentsDir, { recursive: true, force: true }))

  // The other origin: the same page and client module, from a plain Node server on another port.
  const clientModule = await buildClientModule()
  const files: Record<string, [string, string]> = {
    '/index.html': ['text/html; charset=utf-8', readFileSync(join(publicDir, 'index.html'), 'utf8')],
    '/app.js': ['text/javascript; charset=utf-8', readFileSync(join(publicDir, 'app.js'), 'utf8')],
    '/client.js': ['text/javascript; charset=utf-8', clientModule],
  }
  // The copy names the API's full URL in its meta tag (the page never reads it from its own URL).
  const setApi = (html: string, url: string) => html.replace('<meta name="api-base-url" content="/api">', `<meta name="api-base-url" content="${url}">`)
  const pages: Server = createServer((request, response) => {
    const file = files[new URL(request.url ?? '/', 'http://x').pathname]
    if (!file) return void response.writeHead(404).end()
    response.writeHead(200, { 'content-type': file[0] }).end(file[1])
  })
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve))
  const pageOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`
  t.teardown(() => new Promise<void>((resolve) => pages.close(() => resolve())))

  const example = await createExample({
    PORT: '0',
    HOST: '127.0.0.1',
    PGLITE_DIR: 'memory://',
    JWT_SECRET: 'browser-test-secret',
    ATTACHMENTS_DIR: attachmentsDir,
    ALLOWED_ORIGINS: pageOrigin,
  }, { database: await examplePglite() })
  t.teardown(() => example.close())
  const app = example.server.rest!.app
  await app.listen({ port: 0, host: '127.0.0.1' })
  const apiOrigin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] })
  t.teardown(() => browser.close())

  /** Signs up, adds a task, attaches a file, reloads; answers what the page shows. */
  async function clickThrough(url: string, user: string) {
    const context = await browser.newContext()
    const page = await context.newPage()
    const failures: string[] = []
    page.on('pageerror', (error) => failures.push(error.message))
    await page.goto(url)
    await page.waitForSelector('body[data-ready="true"]')
    const loginShown = await page.isVisible('#login-panel')

    await page.fill('#username', user)
    await page.fill('#password', 'secret-1')
    await page.click('#signup')
    await page.waitForSelector('#tasks-panel:not([hidden])')
    const who = await page.textContent('#who')

    await page.fill('#new-title', 'Water the plants')
    await page.click('#add')
    await page.waitForSelector('#tasks > li .title')
    await page.setInputFiles('#tasks > li .attach-file', [
      { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('twice a week') },
      { name: 'plan.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4 plan') },
    ])
    await page.click('#tasks > li .attach')
    await page.waitForSelector('#tasks > li .files li')
    const status = await page.textContent('#status')

    // A type the server refuses: the page shows the envelope's message.
    await page.setInputFiles('#tasks > li .attach-file', { name: 'run.sh', mimeType: 'text/x-sh', buffer: Buffer.from('echo') })
    await page.click('#tasks > li .attach')
    await page.waitForSelector('#status.error')
    const refused = await page.textContent('#status')

    await page.reload()
    await page.waitForSelector('body[data-ready="true"]')
    const shown = {
      loginShown,
      who,
      status,
      refused,
      titles: await page.locator('#tasks > li .title').allTextContents(),
      files: await page.locator('#tasks > li .files li').allTextContents(),
      cookieVisibleToScript: await page.evaluate(() => document.cookie),
      failures,
    }

    await page.click('#logout')
    await page.waitForSelector('#login-panel:not([hidden])')
    await page.fill('#username', user)
    await page.fill('#password', 'secret-1')
    await page.click('#login')
    await page.waitForSelector('#tasks > li .files li')
    const afterLogin = await page.locator('#tasks > li .title').allTextContents()

    // Deleted meanwhile (another tab): tasks.delete answers its declared NOT_FOUND and the page says so by its code.
    const id = await page.getAttribute('#tasks > li', 'data-id')
    const elsewhere = await fetch(`${apiOrigin}/api/services`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ intent: 'execute', service: 'tasks', action: 'delete', payload: { id } }),
    })
    await page.click('#tasks > li .delete')
    await page.waitForSelector('#status.error')
    const alreadyGone = await page.textContent('#status')
    await page.waitForSelector('#tasks > li', { state: 'detached' })
    await context.close()
    // The model's message starts with its log id (`[<id>] Task not found`), which differs per run.
    return { ...shown, afterLogin, deletedElsewhere: elsewhere.status, alreadyGone: alreadyGone?.replace(/\[[^\]]+\] /, '[log id] ') }
  }

  const expected = (user: string) => ({
    loginShown: true,
    who: user,
    status: 'Attached notes.txt, plan.pdf',
    refused: 'file type not allowed',
    titles: ['Water the plants'],
    files: ['notes.txt (12 B)', 'plan.pdf (13 B)'],
    cookieVisibleToScript: '',
    failures: [],
    afterLogin: ['Water the plants'],
    deletedElsewhere: 200,
    alreadyGone: 'Already gone: [log id] Task not found (NOT_FOUND)',
  })

  t.test('served by the example server: log in, add a task, attach files, see them after a reload', async (t) => {
    t.same(await clickThrough(`${apiOrigin}/assets/index.html`, 'ada'), expected('ada'))
  })

  t.test('from another origin: the same page calls the API through CORS with the cookie', async (t) => {
    t.not(pageOrigin, apiOrigin)
    files['/index.html'][1] = setApi(files['/index.html'][1], `${apiOrigin}/api`)
    t.match(files['/index.html'][1], `content="${apiOrigin}/api"`)
    t.same(await clickThrough(`${pageOrigin}/index.html`, 'bea'), expected('bea'))
  })

  t.test('the streaming action, read live on the page (fetch body + the client\'s SSE parser)', async (t) => {
    const context = await browser.newContext()
    t.teardown(() => context.close())
    const page = await context.newPage()
    const failures: string[] = []
    page.on('pageerror', (error) => failures.push(error.message))
    await page.goto(`${apiOrigin}/assets/index.html`)
    await page.waitForSelector('body[data-ready="true"]')
    // Each word is appended as its event arrives: record what the output shows at every change.
    await page.evaluate(() => {
      const seen: string[] = []
      ;(window as unknown as { seen: string[] }).seen = seen
      new MutationObserver(() => seen.push(document.getElementById('stream-output')!.textContent ?? '')).observe(document.getElementById('stream-output')!, {
        childList: true,
        characterData: true,
        subtree: true,
      })
    })
    await page.fill('#stream-name', 'Ada')
    await page.click('#stream-start')
    await page.waitForSelector('#stream-status:text-matches("^Done")')
    const text = 'Hello Ada, these words arrive one at a time, as they are made.'
    t.equal(await page.textContent('#stream-output'), text)
    t.equal(await page.textContent('#stream-status'), `Done: ${text.split(' ').length} words`)
    const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen.filter((value) => value !== ''))
    t.same(seen, text.split(' ').map((_, index, words) => words.slice(0, index + 1).join(' ')), 'one word at a time, in order')

    // Stop after the first word: the request ends, the page says so.
    await page.click('#stream-start')
    await page.waitForSelector('#stream-output:text-matches("^Hello")')
    await page.click('#stream-stop')
    await page.waitForSelector('#stream-status:text-is("Stopped")')
    t.ok(((await page.textContent('#stream-output')) ?? '').split(' ').length < text.split(' ').length, 'fewer words than the whole greeting')
    t.same(failures, [])
  })

  t.test('the attachments are on disk, one file per upload', async (t) => {
    const stored = readdirSync(attachmentsDir).map((name) => readFileSync(join(attachmentsDir, name), 'utf8')).sort()
    t.same(stored, ['%PDF-1.4 plan', '%PDF-1.4 plan', 'twice a week', 'twice a week'])
  })
}
