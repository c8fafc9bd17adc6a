import t from 'tap'
import { createHash } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { rawTarget as rawRequest } from './helpers/raw-target.js'
import { buildServer } from './helpers/server.js'

// The reference page's protective headers, over a real socket (test/openapi-browser.test.ts checks
// in Chromium that the page still renders and calls an action under its policy).

t.test('the page: inline scripts allowed by their hash only, framing refused, no sniffing, no caching behind the secret', async (t) => {
  const server = await buildServer({ rest: { discovery: { enabled: true, secret: 'page-secret' }, openapi: { enabled: true } } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (server.app.server.address() as AddressInfo).port

  const policies: string[] = []
  for (let i = 0; i < 2; i++) {
    const page = await rawRequest(port, 'GET', '/api/reference/', { 'x-discovery-secret': 'page-secret' })
    t.equal(page.status, 200)
    const policy = page.headers['content-security-policy']
    policies.push(policy)
    t.match(policy, /(^|; )script-src 'self'( 'sha256-[A-Za-z0-9+/=]+')+(;|$)/)
    t.notMatch(policy, /script-src[^;]*'unsafe-/, 'no unsafe script source')
    t.match(policy, /(^|; )frame-ancestors 'none'(;|$)/)
    t.match(policy, /(^|; )object-src 'none'(;|$)/)
    t.match(policy, /(^|; )base-uri 'none'(;|$)/)
    t.equal(page.headers['x-content-type-options'], 'nosniff')
    t.equal(page.headers['cache-control'], 'no-store')
    t.equal(page.headers['referrer-policy'], 'no-referrer')
    const allowed = [...policy.matchAll(/'sha256-([^']+)'/g)].map((m) => m[1])
    const inline = [...page.body.matchAll(/<script\b(?![^>]*\ssrc=)[^>]*>([\s\S]*?)<\/script>/g)].map((m) => m[1])
    t.ok(inline.length >= 1, 'the inline start-up script')
    for (const text of inline) t.ok(allowed.includes(createHash('sha256').update(text).digest('base64')), 'each inline script is allowed by its hash')
    t.equal(allowed.length, inline.length, 'and nothing else inline is')
    t.match(page.body, /<script src="js\/scalar\.js\?v=[A-Za-z0-9_-]{22}"><\/script>/, 'the bundle is loaded from this server by its content hash')
  }
  t.equal(policies[0], policies[1], 'the same page, the same policy')

  const script = await rawRequest(port, 'GET', '/api/reference/js/scalar.js')
  t.equal(script.headers['x-content-type-options'], 'nosniff', 'the script is never sniffed as something else')
  const refused = await rawRequest(port, 'GET', '/api/reference/')
  t.equal(refused.status, 403)
  t.equal(refused.headers['content-security-policy'], undefined, 'a refusal is the envelope, not the page')
})

t.test('a public page is revalidated rather than never stored', async (t) => {
  const server = await buildServer({ rest: { discovery: { enabled: true }, openapi: { enabled: true } } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const page = await rawRequest((server.app.server.address() as AddressInfo).port, 'GET', '/api/reference/')
  t.equal(page.status, 200)
  t.equal(page.headers['cache-control'], 'no-cache')
  t.match(page.headers['content-security-policy'], /frame-ancestors 'none'/)
})
