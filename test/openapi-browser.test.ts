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

  const refused = await page.goto(`${origin}/api/reference/`)
  t.equal(refused?.status(), 403, 'without the secret the page is refused')

  await page.goto(`${origin}/api/reference?discoverySecret=page-secret`)
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
}
