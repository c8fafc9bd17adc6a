import t, { type Test } from 'tap'
import { createAction, DEFAULTS, messages, Ok, type Service } from '../../lib/index.js'
import { mayNestDeeper, nestsDeeper, nestsDeeperByStack } from '../../plugins/json-body.js'
import { buildServer } from '../helpers/server.js'

// Finding 3: a payload nested 5,000 arrays deep was parsed, then overflowed the stack when the
// answer was serialized: a 500. The depth is now refused by the body parser, with a 400 envelope,
// before any route, validator or action sees the value.

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

t.test('malformed JSON is the invalid-body 400 however deep it opens (the value is parsed before it is measured)', async (t) => {
  const unclosed = await send(t, body('['.repeat(5000)))
  t.equal(unclosed.status, 400)
  t.same(unclosed.body, { status: false, message: messages.invalidBody, data: {} })
})

t.test('nestsDeeper counts nesting of the parsed value, not brackets', async (t) => {
  const deeper = (text: string, max: number) => nestsDeeper(JSON.parse(text), max)
  t.equal(deeper('[[],[],[]]', 2), false)
  t.equal(deeper('[[[]]]', 2), true)
  t.equal(deeper('"[[[[[[[["', 2), false)
  t.equal(deeper('["\\"", [[[]]]]', 3), true)
  t.equal(deeper('{"a":{"b":{}}}', 3), false)
  t.equal(deeper('{"a":[{"b":[]}]}', 4), false)
  t.equal(deeper('{"a":[{"b":[]}]}', 3), true)
  t.equal(deeper('1', 0), false)
  t.equal(deeper('null', 0), false)
  t.equal(deeper('{}', 0), true)
  // A million levels (V8's parser keeps its own stack too) is answered, not a RangeError: below a
  // limit of 256 the recursive walk stops at the limit; at 256 and above the walk keeps its own stack.
  const million = JSON.parse('['.repeat(1_000_000) + ']'.repeat(1_000_000))
  t.equal(nestsDeeper(million, 64), true)
  t.equal(nestsDeeper(million, 255), true)
  t.equal(nestsDeeper(million, 100_000), true)
  t.equal(nestsDeeper(million, 1_000_000), false)
  const atLimit = (depth: number) => JSON.parse('['.repeat(depth) + ']'.repeat(depth))
  for (const max of [254, 255, 256, 257]) {
    t.equal(nestsDeeper(atLimit(max), max), false, `${max} levels pass a limit of ${max}`)
    t.equal(nestsDeeper(atLimit(max + 1), max), true, `${max + 1} levels do not`)
  }
})

t.test('mayNestDeeper is an upper bound: it says no only when no nesting could pass the limit', async (t) => {
  t.equal(mayNestDeeper('[[[]]]', 2), true)
  t.equal(mayNestDeeper('[[]]', 2), false)
  t.equal(mayNestDeeper('{"a":"[[[[[[[["}', 2), true)
  t.equal(mayNestDeeper('[[]]', 3), false)
})

t.test('the check agrees with a character-by-character scan of the text on random JSON', async (t) => {
  const fc = await import('fast-check')
  // The reference: the scan of the text the check did before the value was walked instead.
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
  // Strings full of brackets, quotes and escapes, inside values nested a few levels.
  const text = fc.stringMatching(/^[[\]{}"\\a é€,:]{0,12}$/)
  const value = fc.letrec((tie) => ({
    node: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.constant(null), fc.array(tie('node'), { maxLength: 4 }), fc.dictionary(text, tie('node'), { maxKeys: 3 })),
  })).node
  fc.assert(
    fc.property(value, fc.integer({ min: 0, max: 6 }), (parsed, max) => {
      const json = JSON.stringify(parsed)
      const expected = reference(json, max)
      const value = JSON.parse(json)
      return nestsDeeper(value, max) === expected && nestsDeeperByStack(value, max) === expected && (!expected || mayNestDeeper(json, max))
    }),
    { numRuns: 20_000 },
  )
  t.pass('20,000 random values agree')
})
