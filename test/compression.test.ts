import t from 'tap'
import Type from 'typebox'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { createAction, Ok, type Service } from '../lib/index.js'
import { ErrConfig } from '../lib/errors.js'
import { buildServer } from './helpers/server.js'
import { echoService } from './helpers/fixtures.js'

// Response compression (`rest.compression`, @fastify/compress): br and gzip for answers over the
// threshold on the endpoint, the per-action routes, the document and the page; never for SSE or
// static files; small answers stay raw.

const big = createAction({
  name: 'big',
  description: 'A large answer',
  validation: Type.Object({ size: Type.Integer({ minimum: 0, maximum: 100_000 }) }),
  handler: (data) => Ok({ text: 'compressible '.repeat(data.size) }),
})
const ticks = createAction({
  name: 'ticks',
  description: 'Streams a few events',
  handler: async function* () {
    for (let i = 0; i < 3; i++) yield { line: 'compressible '.repeat(200) }
    return { done: true }
  },
})
const bulk: Service = { name: 'bulk', description: 'Large answers', actions: [big, ticks] }
const services = [echoService, bulk]
const execute = (size: number) => ({ intent: 'execute', service: 'bulk', action: 'big', payload: { size } })

t.test('on by default: br preferred, then gzip; small answers and clients without Accept-Encoding get raw bytes', async (t) => {
  const server = await buildServer({ services, rest: { openapi: { enabled: true } } })
  t.teardown(() => server.close())
  const expected = { text: 'compressible '.repeat(1000) }

  const br = await server.app.inject({ method: 'POST', url: '/api/services', payload: execute(1000), headers: { 'accept-encoding': 'gzip, deflate, br' } })
  t.equal(br.statusCode, 200)
  t.equal(br.headers['content-encoding'], 'br')
  t.match(String(br.headers.vary), /accept-encoding/i)
  t.ok(br.rawPayload.length < 1000, `13,000 bytes of text in ${br.rawPayload.length}`)
  t.same(JSON.parse(brotliDecompressSync(br.rawPayload).toString()).data, expected)

  const gzip = await server.app.inject({ method: 'POST', url: '/api/services/bulk/big', payload: { size: 1000 }, headers: { 'accept-encoding': 'gzip' } })
  t.equal(gzip.headers['content-encoding'], 'gzip', 'the per-action route too')
  t.same(JSON.parse(gunzipSync(gzip.rawPayload).toString()).data, expected)

  const raw = await server.app.inject({ method: 'POST', url: '/api/services', payload: execute(1000) })
  t.equal(raw.headers['content-encoding'], undefined, 'no Accept-Encoding, no coding')
  t.same(raw.json().data, expected)
  t.equal(raw.headers.vary, 'Accept-Encoding', 'Vary even so: a cache must not hand this to a client that asked for br (RFC 9110 12.5.5)')
  t.equal(raw.headers['content-type'], 'application/json; charset=utf-8')

  const small = await server.app.inject({ method: 'POST', url: '/api/services', payload: execute(2), headers: { 'accept-encoding': 'br, gzip' } })
  t.equal(small.headers['content-encoding'], undefined, 'under the 1 KiB threshold: raw')
  t.same(small.json().data, { text: 'compressible '.repeat(2) })
  t.equal(small.headers.vary, 'Accept-Encoding')
  t.equal(small.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(small.headers['content-length'], String(small.rawPayload.length))

  const refused = await server.app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'execute', service: 'bulk', action: 'nope', payload: {} }, headers: { 'accept-encoding': 'br' } })
  t.equal(refused.statusCode, 400, 'a failure envelope: the same path')
  t.equal(refused.headers.vary, 'Accept-Encoding')
  t.equal(refused.json().status, false)
})

t.test('the coding the client weighs highest among br and gzip; none when it accepts neither', async (t) => {
  const server = await buildServer({ services, rest: { openapi: { enabled: true }, allowedOrigins: ['https://app.example'] } })
  t.teardown(() => server.close())
  for (const [accept, coding] of [
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['x-gzip', 'gzip'],
    ['*', 'br'],
    ['gzip;q=0.2, *;q=0.9', 'br'],
    ['deflate', undefined],
    ['identity', undefined],
    ['br;q=0, gzip;q=0', undefined],
    ['', undefined],
  ] as const) {
    const answer = await server.app.inject({ method: 'POST', url: '/api/services/bulk/big', payload: { size: 1000 }, headers: { 'accept-encoding': accept } })
    t.equal(answer.statusCode, 200)
    t.equal(answer.headers['content-encoding'], coding, `Accept-Encoding: ${accept}`)
    const bytes = coding === 'br' ? brotliDecompressSync(answer.rawPayload) : coding === 'gzip' ? gunzipSync(answer.rawPayload) : answer.rawPayload
    t.equal(JSON.parse(bytes.toString()).data.text.length, 13_000)
  }
  const cors = await server.app.inject({ method: 'POST', url: '/api/services/bulk/big', payload: { size: 1 }, headers: { origin: 'https://app.example' } })
  t.match(String(cors.headers.vary), /Origin/, "CORS's Vary kept")
  t.match(String(cors.headers.vary), /Accept-Encoding/, 'and ours added')
})

t.test('a large answer is compressed off the event loop, whole', async (t) => {
  const server = await buildServer({ services, rest: { bodyLimit: 1024 * 1024 } })
  t.teardown(() => server.close())
  for (const coding of ['br', 'gzip'] as const) {
    const answer = await server.app.inject({ method: 'POST', url: '/api/services', payload: execute(100_000), headers: { 'accept-encoding': coding } })
    t.equal(answer.headers['content-encoding'], coding)
    t.equal(answer.headers['content-length'], String(answer.rawPayload.length))
    const text = (coding === 'br' ? brotliDecompressSync(answer.rawPayload) : gunzipSync(answer.rawPayload)).toString()
    t.equal(JSON.parse(text).data.text, 'compressible '.repeat(100_000), `1.3 MB in ${answer.rawPayload.length} bytes of ${coding}`)
  }
})

t.test('the document and the page: compressed, with a tag that names the coding, and 304 for it', async (t) => {
  const server = await buildServer({ services, rest: { openapi: { enabled: true } } })
  t.teardown(() => server.close())
  const plain = await server.app.inject({ method: 'GET', url: '/api/openapi.json' })
  const etag = String(plain.headers.etag)
  const doc = await server.app.inject({ method: 'GET', url: '/api/openapi.json', headers: { 'accept-encoding': 'br' } })
  t.equal(doc.headers['content-encoding'], 'br')
  t.equal(doc.headers.etag, `${etag.slice(0, -1)}-br"`, 'other bytes, another strong tag')
  t.equal(brotliDecompressSync(doc.rawPayload).toString(), plain.body)
  const again = await server.app.inject({ method: 'GET', url: '/api/openapi.json', headers: { 'accept-encoding': 'br', 'if-none-match': String(doc.headers.etag) } })
  t.equal(again.statusCode, 304)
  t.equal(again.headers.etag, doc.headers.etag, 'the 304 names what the client holds')
  t.equal(again.headers.vary, 'Accept-Encoding', 'a 304 carries the Vary the 200 had (RFC 9110 15.4.5)')
  const twice = await server.app.inject({ method: 'GET', url: '/api/openapi.json', headers: { 'accept-encoding': 'br' } })
  t.same(twice.rawPayload, doc.rawPayload, 'the same bytes: coded once, kept by their tag')
  t.equal(twice.headers['content-length'], String(doc.rawPayload.length))
  const gzipped = await server.app.inject({ method: 'GET', url: '/api/openapi.json', headers: { 'accept-encoding': 'gzip' } })
  t.equal(gzipped.headers.etag, `${etag.slice(0, -1)}-gzip"`)
  t.equal(gunzipSync(gzipped.rawPayload).toString(), plain.body)
  t.equal(plain.headers.vary, 'Accept-Encoding', 'the raw document varies too')
  // A tag that names a coding matches only a request that would get that coding: a cache holding the
  // br answer must not be told to hand it to a client that takes gzip only.
  const other = await server.app.inject({ method: 'GET', url: '/api/openapi.json', headers: { 'accept-encoding': 'gzip', 'if-none-match': String(doc.headers.etag) } })
  t.equal(other.statusCode, 200, 'the br tag, a gzip-only client: the whole answer')
  t.equal(other.headers.etag, gzipped.headers.etag)
  t.equal(gunzipSync(other.rawPayload).toString(), plain.body)
  const none = await server.app.inject({ method: 'GET', url: '/api/openapi.json', headers: { 'if-none-match': String(doc.headers.etag) } })
  t.equal(none.statusCode, 200, 'the br tag, a client that takes no coding: the raw answer')
  t.equal(none.headers.etag, etag)
  const raw = await server.app.inject({ method: 'GET', url: '/api/openapi.json', headers: { 'accept-encoding': 'gzip', 'if-none-match': `${String(gzipped.headers.etag)}, "other"` } })
  t.equal(raw.statusCode, 304, 'the gzip tag among others, a gzip client: 304')
  t.equal(raw.headers.etag, gzipped.headers.etag)

  const page = await server.app.inject({ method: 'GET', url: '/api/reference/', headers: { 'accept-encoding': 'gzip' } })
  t.equal(page.headers['content-encoding'], 'gzip')
  t.match(gunzipSync(page.rawPayload).toString(), /^<!doctype html>/)
  const src = /<script src="(js\/scalar\.js\?v=[^"]+)">/.exec(gunzipSync(page.rawPayload).toString())?.[1]
  const script = await server.app.inject({ method: 'GET', url: `/api/reference/${src}`, headers: { 'accept-encoding': 'br, gzip' } })
  t.equal(script.headers['content-encoding'], 'br', 'the bundle (application/javascript) too')
  t.equal(script.headers['cache-control'], 'public, max-age=31536000, immutable')
  t.ok(script.rawPayload.length < 1_500_000, `the bundle in ${script.rawPayload.length} bytes`)
  const held = await server.app.inject({ method: 'GET', url: `/api/reference/${src}`, headers: { 'accept-encoding': 'br, gzip', 'if-none-match': String(script.headers.etag) } })
  t.equal(held.statusCode, 304, 'the script: 304 for the br tag it gave')
  t.equal(held.headers.etag, script.headers.etag)
  const pageAgain = await server.app.inject({ method: 'GET', url: '/api/reference/', headers: { 'accept-encoding': 'gzip', 'if-none-match': String(page.headers.etag) } })
  t.equal(pageAgain.statusCode, 304, 'the page: 304 for the gzip tag it gave')
  const pageBr = await server.app.inject({ method: 'GET', url: '/api/reference/', headers: { 'accept-encoding': 'br', 'if-none-match': String(page.headers.etag) } })
  t.equal(pageBr.statusCode, 200, 'the page: the gzip tag from a br client is not its answer')
  t.equal(pageBr.headers['content-encoding'], 'br')
})

t.test('never for a stream: each event must reach the client when written', async (t) => {
  const server = await buildServer({ services, rest: { openapi: { enabled: true } } })
  t.teardown(() => server.close())
  for (const url of ['/api/services', '/api/services/bulk/ticks']) {
    const payload = url === '/api/services' ? { intent: 'execute', service: 'bulk', action: 'ticks', payload: {} } : {}
    const stream = await server.app.inject({ method: 'POST', url, payload, headers: { accept: 'text/event-stream', 'accept-encoding': 'br, gzip' } })
    t.equal(stream.statusCode, 200)
    t.match(String(stream.headers['content-type']), /^text\/event-stream/)
    t.equal(stream.headers['content-encoding'], undefined, url)
    t.match(stream.body, /event: done/)
  }
})

t.test('rest.compression: false for none, a threshold, the codings', async (t) => {
  const off = await buildServer({ services, rest: { compression: false } })
  t.teardown(() => off.close())
  const raw = await off.app.inject({ method: 'POST', url: '/api/services', payload: execute(1000), headers: { 'accept-encoding': 'br, gzip' } })
  t.equal(raw.headers['content-encoding'], undefined)

  const tuned = await buildServer({ services, rest: { compression: { threshold: 0, encodings: ['gzip'] } } })
  t.teardown(() => tuned.close())
  const small = await tuned.app.inject({ method: 'POST', url: '/api/services', payload: execute(2), headers: { 'accept-encoding': 'br, gzip' } })
  t.equal(small.headers['content-encoding'], 'gzip', 'threshold 0 and gzip only')
  t.same(JSON.parse(gunzipSync(small.rawPayload).toString()).data, { text: 'compressible '.repeat(2) })

  for (const [compression, key] of [
    ['yes', 'rest.compression'],
    [{ threshold: -1 }, 'rest.compression.threshold'],
    [{ encodings: ['zstd'] }, 'rest.compression.encodings'],
    [{ encodings: [] }, 'rest.compression.encodings'],
    [{ level: 3 }, 'rest.compression.level'],
  ] as const) {
    await t.rejects(buildServer({ services, rest: { compression: compression as never } }), ErrConfig, `${JSON.stringify(compression)} is refused`)
    await t.rejects(buildServer({ services, rest: { compression: compression as never } }), { message: new RegExp(key.replaceAll('.', '\\.')) })
  }
})
