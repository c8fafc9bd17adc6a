import t from 'tap'
import Fastify from 'fastify'
import { matchesIfNoneMatch } from '../plugins/http-cache.js'
import { openApiPlugin } from '../plugins/openapi.js'
import { referencePlugin } from '../plugins/openapi-reference.js'
import { buildServer } from './helpers/server.js'

// The OpenAPI document and the reference page are built once per server and revalidated by a strong
// ETag; the page's script lives under a content-hashed URL cached as immutable (docs/openapi.md).

const IMMUTABLE = 'public, max-age=31536000, immutable'

t.test('openapi.json: a strong ETag, 304 on If-None-Match, revalidated when public', async (t) => {
  const server = await buildServer({ rest: { discovery: { enabled: true }, openapi: { enabled: true } } })
  t.teardown(() => server.close())
  const first = await server.app.inject({ method: 'GET', url: '/api/openapi.json' })
  t.equal(first.statusCode, 200)
  const etag = String(first.headers.etag)
  t.match(etag, /^"[A-Za-z0-9_-]{22}"$/, 'a strong tag (no W/)')
  t.equal(first.headers['cache-control'], 'no-cache')
  const second = await server.app.inject({ method: 'GET', url: '/api/openapi.json' })
  t.equal(second.headers.etag, etag, 'the same document, the same tag')
  t.equal(second.body, first.body)

  for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
    const cached = await server.app.inject({ method: 'GET', url: '/api/openapi.json', headers: { 'if-none-match': header } })
    t.equal(cached.statusCode, 304, `If-None-Match: ${header}`)
    t.equal(cached.body, '', 'no body')
    t.equal(cached.headers.etag, etag)
    t.equal(cached.headers['cache-control'], 'no-cache')
  }
  const stale = await server.app.inject({ method: 'GET', url: '/api/openapi.json', headers: { 'if-none-match': '"stale"' } })
  t.equal(stale.statusCode, 200)
  t.equal(stale.body, first.body)
})

t.test('openapi.json behind the secret: never stored, and a tag is no way past the gate', async (t) => {
  const server = await buildServer({ rest: { discovery: { enabled: true, secret: 'doc-secret' }, openapi: { enabled: true } } })
  t.teardown(() => server.close())
  const ok = await server.app.inject({ method: 'GET', url: '/api/openapi.json', headers: { 'x-discovery-secret': 'doc-secret' } })
  t.equal(ok.statusCode, 200)
  t.equal(ok.headers['cache-control'], 'no-store')
  const etag = String(ok.headers.etag)
  const cached = await server.app.inject({ method: 'GET', url: '/api/openapi.json', headers: { 'x-discovery-secret': 'doc-secret', 'if-none-match': etag } })
  t.equal(cached.statusCode, 304)
  const refused = await server.app.inject({ method: 'GET', url: '/api/openapi.json', headers: { 'if-none-match': etag } })
  t.equal(refused.statusCode, 403, 'the gate answers before the cache')
  t.same(refused.json(), { status: false, message: 'Invalid or missing discovery secret', data: {} })
  t.equal(refused.headers.etag, undefined)
})

t.test('the reference page is built once per server, then the same bytes with a strong ETag', async (t) => {
  // Scalar serializes its configuration (and the document in it) each time it renders the page: a
  // document that counts its serializations counts the builds.
  let serialized = 0
  const document = {
    openapi: '3.1.0',
    info: { title: 'Counted', version: '1.0.0' },
    paths: {},
    toJSON() {
      serialized++
      return { openapi: this.openapi, info: this.info, paths: this.paths }
    },
  }
  const app = Fastify()
  t.teardown(() => app.close())
  const options = { document, openapi: { path: '/openapi.json', info: document.info, version: '3.1' as const, servers: [{ url: '/' }], public: false, extra: {} }, discovery: { enabled: true } }
  await app.register(openApiPlugin, options)
  await app.register(referencePlugin, { ...options, path: '/reference' })
  await app.ready()
  t.equal(serialized, 1, 'the document, serialized once at boot')

  const pages = []
  for (let i = 0; i < 5; i++) pages.push(await app.inject({ method: 'GET', url: '/reference/' }))
  t.equal(serialized, 2, 'five visits, one page build')
  const etag = String(pages[0]!.headers.etag)
  t.match(etag, /^"[A-Za-z0-9_-]{22}"$/)
  for (const page of pages) {
    t.equal(page.statusCode, 200)
    t.equal(page.body, pages[0]!.body, 'the same bytes')
    t.equal(page.headers.etag, etag)
    t.equal(page.headers['content-security-policy'], pages[0]!.headers['content-security-policy'])
    t.equal(page.headers['content-type'], 'text/html; charset=utf-8')
  }
  t.ok(pages[0]!.body.includes('"Counted"'), 'the page carries the document')

  const cached = await app.inject({ method: 'GET', url: '/reference/', headers: { 'if-none-match': etag } })
  t.equal(cached.statusCode, 304)
  t.equal(cached.body, '')
  t.equal(cached.headers.etag, etag)
  t.equal(cached.headers['cache-control'], 'no-cache')
  t.equal(serialized, 2)
})

t.test("the page's script: immutable under its content-hashed URL, revalidated under the plain one", async (t) => {
  const server = await buildServer({ rest: { discovery: { enabled: true }, openapi: { enabled: true } } })
  t.teardown(() => server.close())
  const page = await server.app.inject({ method: 'GET', url: '/api/reference/' })
  const src = /<script src="(js\/scalar\.js\?v=[A-Za-z0-9_-]{22})"><\/script>/.exec(page.body)?.[1]
  t.ok(src, 'the page names the script by its hash')

  const hashed = await server.app.inject({ method: 'GET', url: `/api/reference/${src}` })
  t.equal(hashed.statusCode, 200)
  t.equal(hashed.headers['cache-control'], IMMUTABLE)
  t.match(String(hashed.headers['content-type']), /^application\/javascript/)
  t.ok(hashed.body.length > 100_000, 'the bundle itself')
  const etag = String(hashed.headers.etag)
  t.match(etag, /^"[A-Za-z0-9_-]{22}"$/)

  const plain = await server.app.inject({ method: 'GET', url: '/api/reference/js/scalar.js' })
  t.equal(plain.statusCode, 200)
  t.equal(plain.headers['cache-control'], 'no-cache', 'no version, no promise')
  t.equal(plain.body, hashed.body)
  const wrong = await server.app.inject({ method: 'GET', url: '/api/reference/js/scalar.js?v=AAAAAAAAAAAAAAAAAAAAAA' })
  t.equal(wrong.headers['cache-control'], 'no-cache', 'a hash that is not this content is not immutable')
  const cached = await server.app.inject({ method: 'GET', url: '/api/reference/js/scalar.js', headers: { 'if-none-match': etag } })
  t.equal(cached.statusCode, 304)
  t.equal(cached.body, '')
})

t.test('If-None-Match is compared weakly, as RFC 9110 says', async (t) => {
  t.ok(matchesIfNoneMatch('"a"', '"a"'))
  t.ok(matchesIfNoneMatch('W/"a"', '"a"'))
  t.ok(matchesIfNoneMatch(' "b" , "a" ', '"a"'))
  t.ok(matchesIfNoneMatch('*', '"a"'))
  t.notOk(matchesIfNoneMatch('"ab"', '"a"'))
  t.notOk(matchesIfNoneMatch(undefined, '"a"'))
  t.notOk(matchesIfNoneMatch('', '"a"'))
  // A tag that names a coding (plugins/compression.ts) matches a request that would get that coding only.
  t.ok(matchesIfNoneMatch('"a-br"', '"a"', 'br'))
  t.ok(matchesIfNoneMatch('W/"a-gzip", "b"', '"a"', 'gzip'))
  t.notOk(matchesIfNoneMatch('"a-br"', '"a"', 'gzip'))
  t.notOk(matchesIfNoneMatch('"a-br"', '"a"'))
  t.notOk(matchesIfNoneMatch('"b-br"', '"a"', 'br'))
})
