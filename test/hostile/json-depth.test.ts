import t, { type Test } from 'tap'
import { createAction, DEFAULTS, messages, Ok, type Service } from '../../lib/index.js'
import { exceedsDepth } from '../../plugins/json-body.js'
import { buildServer } from '../helpers/server.js'

// Finding 3: a payload nested 5,000 arrays deep was parsed, then overflowed the stack when the
// answer was serialized: a 500. The depth is now refused while parsing, with a 400 envelope.

const mirror = createAction({ name: 'mirror', description: 'Answers its payload', handler: (data) => Ok({ data }) })
const mirrorService: Service = { name: 'mirror', description: 'Echoes payloads', actions: [mirror] }

const nested = (depth: number, open = '[', close = ']') => `${open.repeat(depth)}${close.repeat(depth)}`
const objects = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)
const body = (payloadValue: string) => `{"intent":"execute","service":"mirror","action":"mirror","payload":{"v":${payloadValue}}}`

async function send(t: Test, text: string, rest = {}, contentType = 'application/json') {
  const server = await buildServer({ services: [mirrorService], rest })
  t.teardown(() => server.close())
  const response = await server.app.inject({ method: 'POST', url: '/api/services', headers: { 'content-type': contentType }, payload: text })
  return { status: response.statusCode, body: response.json() }
}


t.test('the default depth is 64', async (t) => {
  t.equal(DEFAULTS.rest.maxDepth, 64)
})

t.test('5,000 nested arrays answer 400 with the depth envelope, not 500', async (t) => {
  const answer = await send(t, body(nested(5000)))
  t.equal(answer.status, 400)
  t.same(answer.body, { status: false, message: messages.jsonTooDeep(64), data: { maxDepth: 64 } })
})

t.test('10,000 nested objects answer 400 too (application/*+json as well)', async (t) => {
  const answer = await send(t, body(objects(10_000)), {}, 'application/vnd.api+json')
  t.equal(answer.status, 400)
  t.equal(answer.body.message, messages.jsonTooDeep(64))
})

t.test('exactly maxDepth levels pass; one more is refused (the envelope and payload count)', async (t) => {
  // The envelope object is level 1, `payload` level 2: 62 nested arrays make 64.
  const atLimit = await send(t, body(nested(62)))
  t.equal(atLimit.status, 200)
  t.equal(atLimit.body.status, true)
  const over = await send(t, body(nested(63)))
  t.equal(over.status, 400)
  t.equal(over.body.message, messages.jsonTooDeep(64))
})

t.test('rest.maxDepth configures it', async (t) => {
  const answer = await send(t, body(nested(10)), { maxDepth: 8 })
  t.equal(answer.status, 400)
  t.same(answer.body, { status: false, message: messages.jsonTooDeep(8), data: { maxDepth: 8 } })
  const fine = await send(t, body(nested(200)), { maxDepth: 300 })
  t.equal(fine.status, 200)
})

t.test('rest.maxDepth must be a positive integer', async (t) => {
  await t.rejects(buildServer({ rest: { maxDepth: 0 } }), { code: 'FA_ERR_CONFIG', message: /rest\.maxDepth/ })
})

t.test('brackets inside strings do not count; malformed JSON is still the invalid-body 400', async (t) => {
  const inString = await send(t, body(JSON.stringify('['.repeat(10_000))))
  t.equal(inString.status, 200)
  t.equal(inString.body.data.data.v, '['.repeat(10_000))
  const escaped = await send(t, body(JSON.stringify('\\"[[[' + '['.repeat(100))))
  t.equal(escaped.status, 200)
  const broken = await send(t, '{"intent": [')
  t.equal(broken.status, 400)
  t.equal(broken.body.message, messages.invalidBody)
})

t.test('exceedsDepth counts nesting, not brackets', async (t) => {
  t.equal(exceedsDepth('[[],[],[]]', 2), false)
  t.equal(exceedsDepth('[[[]]]', 2), true)
  t.equal(exceedsDepth('"[[[[[[[["', 2), false)
  t.equal(exceedsDepth('["\\"", [[[]]]]', 3), true)
  t.equal(exceedsDepth('{"a":{"b":{}}}', 3), false)
  // Both kinds of opener count towards the quick upper bound: four levels of `{` and `[` mixed.
  t.equal(exceedsDepth('{"a":[{"b":[]}]}  ', 4), false)
  t.equal(exceedsDepth('{"a":[{"b":[]}]}  ', 3), true)
  t.equal(exceedsDepth(`{"a":[{"b":[]}]}${' '.repeat(100)}`, 3), true)
})

t.test('exceedsDepth agrees with a plain character-by-character scan on random text (strings, escapes, brackets)', async (t) => {
  const fc = await import('fast-check')
  // The reference: the scan exceedsDepth did before its strings were skipped with a native search.
  const reference = (text: string, max: number) => {
    let depth = 0
    for (let i = 0; i < text.length; i++) {
      const c = text[i]
      if (c === '"') {
        for (i++; i < text.length; i++) {
          if (text[i] === '\\') i++
          else if (text[i] === '"') break
        }
      } else if (c === '{' || c === '[') {
        if (++depth > max) return true
      } else if (c === '}' || c === ']') depth--
    }
    return false
  }
  const piece = fc.constantFrom('{', '}', '[', ']', '"', '\\', '\\"', '\\\\', '"\\\\"', 'a', 'é', '€', ',', ':', '1', ' ', '{"k":', '[[', ']]')
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 60 }), fc.integer({ min: 0, max: 6 }), (pieces, max) => {
      const text = pieces.join('')
      return exceedsDepth(text, max) === reference(text, max)
    }),
    { numRuns: 20_000 },
  )
  t.pass('20,000 random texts agree')
})
