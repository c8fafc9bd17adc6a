import t from 'tap'
import type { AddressInfo } from 'node:net'
import { CHROMIUM, chromiumSkipReason } from './helpers/chromium.js'
import { everythingServices } from './helpers/openapi.js'
import type { TapTest } from './helpers/postgres.js'
import { buildServer } from './helpers/server.js'

// The reference page in a real Chromium that may reach nothing but loopback: every asset must come
// from this server, every visible action must show, and a person can call one from the page.

const skip = chromiumSkipReason()
t.test('the reference page in Chromium, with no outside network', skip ? { skip } : {}, run)

async function run(t: TapTest) {
  const { chromium } = await import('playwright-core')
  const server = await buildServer({
    services: everythingServices,
    rest: { host: '127.0.0.1', discovery: { enabled: true, secret: 'page-secret' }, openapi: { enabled: true } },
  })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] })
  t.teardown(() => browser.close())
  const context = await browser.newContext()
  const outside: string[] = []
  const loopback: string[] = []
  // Every request leaves through here: anything not on loopback is recorded and refused.
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url())
    if (url.hostname === '127.0.0.1' || url.hostname === 'localhost') {
      loopback.push(`${route.request().method()} ${url.pathname}`)
      return route.continue()
    }
    outside.push(route.request().url())
    return route.abort('internetdisconnected')
  })
  const page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  // The page is served with a Content-Security-Policy: anything it blocks shows here.
  const blocked: string[] = []
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) blocked.push(message.text())
  })

  const refused = await page.goto(`${origin}/api/reference/`)
  t.equal(refused?.status(), 403, 'without the secret the page is refused')

  const shown = await page.goto(`${origin}/api/reference?discoverySecret=page-secret`)
  const headers = shown!.headers()
  t.match(headers['content-security-policy'], /script-src 'self'( 'sha256-[A-Za-z0-9+/=]{44}')+;.*frame-ancestors 'none'/, 'the page carries its CSP')
  t.equal(headers['cache-control'], 'no-store', 'behind the secret the page is never stored')
  t.equal(headers['x-content-type-options'], 'nosniff')
  t.equal(headers['referrer-policy'], 'no-referrer')
  t.match(page.url(), /\/api\/reference\/\?discoverySecret=page-secret(#.*)?$/, 'the redirect to the page keeps the secret')
  for (const summary of ['One person by id', 'How many people', 'Find by name', 'No schema at all', 'The caller (protected)', 'Upload an avatar', 'Echoes a title and a count']) {
    await page.getByText(summary, { exact: false }).first().waitFor({ timeout: 20_000 })
  }
  const text = await page.locator('body').innerText()
  t.notMatch(text, /Hidden from REST/, 'a hidden action is not shown')

  // A person calls an action from the page: open its operation, open the client, send.
  await page.getByText('How many people', { exact: false }).first().click()
  await page.getByRole('button', { name: /Test Request\s*\(post \/api\/services\/people\/count\)/ }).click({ timeout: 10_000 })
  const sent = page.waitForResponse((response) => response.url().endsWith('/api/services/people/count'), { timeout: 15_000 })
  await page.getByRole('button', { name: /^Send Request/ }).click()
  const response = await sent
  t.equal(response.status(), 200)
  t.same(await response.json(), { status: true, message: "Action 'people.count' executed", data: { result: 3 } })

  t.same(outside, [], 'no request left loopback')
  t.ok(loopback.some((line) => line.endsWith('/api/reference/js/scalar.js')), 'the script came from this server')
  t.same(errors, [], 'no page errors')
  t.same(blocked, [], 'the CSP blocked nothing the page needs')
}
