import t from 'tap'
import fc from 'fast-check'
import Type from 'typebox'
import { createAction, Ok } from '../lib/index.js'
import { buildServer } from './helpers/server.js'
import { echoService } from './helpers/fixtures.js'

// Property-based fuzzing of POST /api/services through a real socket: whatever arrives, the answer
// is an envelope below 500, Object.prototype stays clean and the server keeps serving.
const seed = Number(process.env.FUZZ_SEED ?? 20261121)
const numRuns = Number(process.env.FUZZ_RUNS ?? 3000)

const nested = createAction({
  name: 'nested',
  description: 'Validates a nested object',
  validation: Type.Object({ user: Type.Object({ name: Type.String({ maxLength: 50 }), tags: Type.Array(Type.String()) }) }),
  handler: (data) => Ok({ name: data.user.name }),
})

const contentTypes = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  'application/vnd.api+json',
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=----fuzz',
  'application/xml',
  'application/octet-stream',
  '*/*',
  ';;;',
  'application/json; boundary=',
]

const intents = fc.oneof(fc.constantFrom('execute', 'explore', 'schema'), fc.string(), fc.anything())
const names = fc.oneof(fc.constantFrom('tasks', 'echo', 'fails', 'throws', 'list', 'nested', 'fz', '*', '__proto__', 'constructor', 'toString'), fc.string())

const envelopeLike = fc.record(
  {
    intent: intents,
    service: fc.oneof(names, fc.anything()),
    action: fc.oneof(names, fc.anything()),
    payload: fc.oneof(fc.object(), fc.anything(), fc.record({ title: fc.anything(), count: fc.anything() })),
  },
  { requiredKeys: [] },
)

function deepJson(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)
}

/** Injects prototype-pollution keys into JSON text. */
function poisoned(inner: string, key: '__proto__' | 'constructor'): string {
  return key === '__proto__'
    ? `{"intent":"execute","service":"tasks","action":"echo","payload":{"__proto__":${inner}}}`
    : `{"intent":"execute","service":"tasks","action":"echo","payload":{"constructor":{"prototype":${inner}}}}`
}

const bodies: fc.Arbitrary<{ body: string | Uint8Array<ArrayBuffer>; contentType: string | undefined }> = fc.oneof(
  envelopeLike.map((value) => ({ body: safeStringify(value), contentType: 'application/json' })),
  fc.jsonValue().map((value) => ({ body: JSON.stringify(value), contentType: 'application/json' })),
  fc.string({ unit: 'binary' }).map((body) => ({ body, contentType: 'application/json' })),
  fc.tuple(fc.integer({ min: 1, max: 20_000 }), fc.constantFrom('array', 'object') as fc.Arbitrary<'array' | 'object'>).map(([depth, kind]) => ({
    body: deepJson(depth, kind),
    contentType: 'application/json',
  })),
  fc.integer({ min: 1, max: 2_000_000 }).map((size) => ({
    body: JSON.stringify({ intent: 'execute', service: 'tasks', action: 'echo', payload: { title: 'x'.repeat(size), count: 1 } }),
    contentType: 'application/json',
  })),
  fc.tuple(fc.jsonValue(), fc.constantFrom('__proto__', 'constructor') as fc.Arbitrary<'__proto__' | 'constructor'>).map(([inner, key]) => ({
    body: poisoned(JSON.stringify({ polluted: inner ?? 1 }), key),
    contentType: 'application/json',
  })),
  fc.tuple(envelopeLike, fc.constantFrom(...contentTypes)).map(([value, contentType]) => ({ body: safeStringify(value), contentType })),
  fc.tuple(fc.uint8Array({ maxLength: 4096 }), fc.constantFrom(...contentTypes, undefined)).map(([bytes, contentType]) => ({ body: new Uint8Array(bytes), contentType })),
  fc.string().map((junk) => ({
    body: `------fuzz\r\nContent-Disposition: form-data; name="intent"\r\n\r\n${junk}\r\n------fuzz\r\nContent-Disposition: form-data; name="file"; filename="${junk}"\r\n\r\n${junk}`,
    contentType: 'multipart/form-data; boundary=----fuzz',
  })),
)

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? v.toString() : v)) ?? 'null'
  } catch {
    return '{}'
  }
}

t.test('fuzzing the services endpoint through a real socket', async (t) => {
  const server = await buildServer({ services: [echoService, { name: 'fz', description: '', actions: [nested] }], rest: { enableStatus: true } })
  t.teardown(() => server.close())
  const address = await server.app.listen({ port: 0, host: '127.0.0.1' })
  const url = `${address}/api/services`
  t.comment(`fast-check seed ${seed}, ${numRuns} runs per property (FUZZ_SEED / FUZZ_RUNS to change)`)

  let answered = 0
  const failures: string[] = []
  await fc.assert(
    fc.asyncProperty(bodies, async ({ body, contentType }) => {
      const headers: Record<string, string> = {}
      if (contentType !== undefined) headers['content-type'] = contentType
      const response = await fetch(url, { method: 'POST', headers, body })
      const text = await response.text()
      answered++
      let envelope: { status?: unknown; message?: unknown; data?: unknown }
      try {
        envelope = JSON.parse(text)
      } catch {
        failures.push(`not JSON (${response.status}): ${text.slice(0, 100)}`)
        return false
      }
      const isEnvelope =
        typeof envelope.status === 'boolean' && typeof envelope.message === 'string' && typeof envelope.data === 'object' && envelope.data !== null
      const clean = !('polluted' in Object.prototype) && ({} as Record<string, unknown>).polluted === undefined
      const okStatus = response.status < 500 && (response.status === 200) === (envelope.status === true)
      if (!isEnvelope || !clean || !okStatus) failures.push(`${response.status} ${text.slice(0, 200)}`)
      return isEnvelope && clean && okStatus
    }),
    { seed, numRuns, verbose: 1 },
  )
  t.same(failures, [])
  t.ok(answered >= numRuns, `${answered} requests answered`)
  const status = await fetch(`${address}/status`)
  t.equal(status.status, 200, 'the server is still up')
  t.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false)
})
