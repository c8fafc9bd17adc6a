import t from 'tap'
import fc from 'fast-check'
import Type from 'typebox'
import { createAction, Ok } from '../lib/index.js'
import { buildServer } from './helpers/server.js'
import { echoService } from './helpers/fixtures.js'
import { filesService } from './helpers/uploads.js'

// Property-based fuzzing of POST /api/services through a real socket: whatever arrives, the answer
// is an envelope below 500, Object.prototype stays clean and the server keeps serving.
// The budget is a count of runs (1,000, about 20 CPU seconds; FUZZ_RUNS for a longer run), never
// a clock: the file's timeout is far above what the runs need on a loaded machine. .ci/run gives
// each of its three Node runs its own FUZZ_SEED, so one CI run tries 3,000 distinct cases.
const seed = Number(process.env.FUZZ_SEED ?? 20261121)
const numRuns = Number(process.env.FUZZ_RUNS ?? 1000)

t.setTimeout(600_000)

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

// Multipart bodies: random boundaries, parts with hostile names and file names (control
// characters, CR/LF, `filename*`), huge headers, preambles and epilogues, truncated anywhere.
const boundaryChars = fc.constantFrom(...'abcXYZ0189\'()+_,-./:=? '.split(''))
const boundaries = fc.string({ unit: boundaryChars, minLength: 1, maxLength: 70 }).filter((b) => !b.endsWith(' '))
const partName = fc.oneof(fc.constantFrom('intent', 'service', 'action', 'doc', 'note', '__proto__', ''), fc.string({ maxLength: 20 }))
const fileName = fc.oneof(
  fc.constantFrom('a.png', 'a.exe\0.png', '\x1b[31m.png', 'evil\r\n.png', '../../etc/passwd', 'x'.repeat(300)),
  fc.string({ unit: 'binary', maxLength: 40 }),
)
const disposition = fc.oneof(
  fc.tuple(partName, fc.option(fileName, { nil: undefined })).map(([name, file]) => `form-data; name="${name}"${file === undefined ? '' : `; filename="${file}"`}`),
  fc.tuple(partName, fc.string({ maxLength: 30 })).map(([name, raw]) => `form-data; name="${name}"; filename*=utf-8''${encodeURIComponent(raw).replace(/%20/g, '%0d%0a')}`),
  fc.constantFrom('attachment; filename="a.png"', 'form-data', 'form-data; filename="nameless.png"', ''),
)
const part = fc.record({
  disposition,
  type: fc.option(fc.constantFrom('image/png', 'application/pdf', 'application/octet-stream', 'application/json', 'text/plain; charset=utf-16'), { nil: undefined }),
  extraHeader: fc.option(fc.integer({ min: 0, max: 20_000 }), { nil: undefined }),
  value: fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.integer({ min: 0, max: 100_000 }).map((n) => 'v'.repeat(n))),
})
const multipartBodies = fc
  .record({
    boundary: boundaries,
    routing: fc.boolean(),
    parts: fc.array(part, { maxLength: 6 }),
    preamble: fc.oneof(fc.constant(''), fc.integer({ min: 1, max: 20_000 }).map((n) => 'p'.repeat(n) + '\r\n')),
    epilogue: fc.oneof(fc.constant(''), fc.integer({ min: 1, max: 20_000 }).map((n) => 'e'.repeat(n))),
    cut: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
    headerBoundary: fc.option(boundaries, { nil: undefined }),
  })
  .map(({ boundary, routing, parts, preamble, epilogue, cut, headerBoundary }) => {
    const all = routing
      ? [{ disposition: 'form-data; name="intent"', value: 'execute' }, { disposition: 'form-data; name="service"', value: 'files' }, { disposition: 'form-data; name="action"', value: 'structured' }, ...parts]
      : parts
    let text = preamble
    for (const p of all) {
      const type = 'type' in p && p.type ? `\r\nContent-Type: ${p.type}` : ''
      const extra = 'extraHeader' in p && p.extraHeader !== undefined ? `\r\nX-Pad: ${'h'.repeat(p.extraHeader)}` : ''
      text += `--${boundary}\r\nContent-Disposition: ${p.disposition}${type}${extra}\r\n\r\n${p.value}\r\n`
    }
    text += `--${boundary}--\r\n${epilogue}`
    const bytes = Buffer.from(text, 'latin1')
    const body = new Uint8Array(cut === undefined ? bytes : bytes.subarray(0, Math.floor(bytes.length * cut)))
    return { body, contentType: `multipart/form-data; boundary="${headerBoundary ?? boundary}"` }
  })

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
  multipartBodies,
  multipartBodies,
)

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? v.toString() : v)) ?? 'null'
  } catch {
    return '{}'
  }
}

t.test('fuzzing the services endpoint through a real socket', async (t) => {
  const server = await buildServer({ services: [echoService, filesService, { name: 'fz', description: '', actions: [nested] }], rest: { enableStatus: true } })
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
