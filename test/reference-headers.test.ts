import t from 'tap'
import type { AddressInfo } from 'node:net'
import { rawTarget as rawRequest } from './helpers/raw-target.js'
import { buildServer } from './helpers/server.js'

// The reference page's protective headers, over a real socket (test/openapi-browser.test.ts checks
// in Chromium that the page still renders and calls an action under its policy).

t.test('the page: a fresh nonce per response, framing refused, no sniffing, no caching behind the secret', async (t) => {
  const server = await buildServer({ rest: { discovery: { enabled: true, secret: 'page-secret' }, openapi: { enabled: true } } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (server.app.server.address() as AddressInfo).port

  const nonces: string[] = []
  for (let i = 0; i < 2; i++) {
    const page = await rawRequest(port, 'GET', '/api/reference/', { 'x-discovery-secret': 'page-secret' })
    t.equal(page.status, 200)
    const policy = page.headers['content-security-policy']
    const nonce = /'nonce-([^']+)'/.exec(policy)?.[1]
    t.ok(nonce, 'the policy names a nonce')
    nonces.push(nonce!)
    t.match(policy, /(^|; )script-src 'self' 'nonce-[^']+'(;|$)/)
    t.match(policy, /(^|; )frame-ancestors 'none'(;|$)/)
    t.match(policy, /(^|; )object-src 'none'(;|$)/)
    t.match(policy, /(^|; )base-uri 'none'(;|$)/)
    t.equal(page.headers['x-content-type-options'], 'nosniff')
    t.equal(page.headers['cache-control'], 'no-store')
    t.equal(page.headers['referrer-policy'], 'no-referrer')
    const scripts = page.body.match(/<script\b[^>]*>/g) ?? []
    t.ok(scripts.length >= 2, 'the bundle and the inline start-up script')
    for (const tag of scripts) t.ok(tag.includes(` nonce="${nonce}"`), `${tag} carries this response's nonce`)
  }
  t.not(nonces[0], nonces[1], 'each response has its own nonce')

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
