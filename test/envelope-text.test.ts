/**
 * The JSON endpoint writes a success envelope without an `output` schema from the action's head made
 * at boot and the data's JSON (lib/answer.ts `envelopeText`): the bytes must be exactly
 * `JSON.stringify` of the whole envelope (lib/envelope.ts `toJson`), on the one endpoint and on a
 * per-action route, for every kind of value a handler may answer with.
 */
import t from 'tap'
import { createAction, createService, Ok } from '../lib/index.js'
import { toJson } from '../lib/envelope.js'
import { buildServer } from './helpers/server.js'

/** The values each case's handler answers with (a fresh one per call: `cyclic` refers to itself). */
const values: Record<string, () => unknown> = {
  plain: () => ({ title: 'Write "the" harness\n', count: 42, nested: { list: [1, 'two', null], empty: {} } }),
  unicode: () => ({ text: 'été \u2028 \ud83d\ude00 \u0000', lone: '\ud800' }),
  undefinedField: () => ({ kept: 1, dropped: undefined, fn: () => 1 }),
  // JSON has no BigInt: toJson writes it as a string, here as in the whole envelope.
  bigint: () => ({ id: 12345678901234567890n, list: [1n] }),
  // A toJSON of the data itself is called with the key it sits under: `data` in the envelope.
  ownToJson: () => ({ secret: 'x', toJSON: (key: string) => ({ key }) }),
  // Not a plain object: it goes under `result`.
  number: () => 7,
  array: () => [1, 2, 3],
  date: () => new Date(0),
  nullPrototype: () => Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 }),
}

const service = createService({
  name: 'text',
  description: 'Answers with the value its case names',
  actions: Object.keys(values).map((name) =>
    createAction({ name, description: `Answers ${name}`, handler: () => Ok(values[name]() as Record<string, unknown>) }),
  ),
})

t.test('a success without an output schema: the bytes of JSON.stringify of the whole envelope', async (t) => {
  const server = await buildServer({ services: [service], rest: { openapi: { actionRoutes: true } } })
  t.teardown(() => server.close())
  for (const name of Object.keys(values)) {
    const value = values[name]()
    const data = value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date) ? value : { result: value }
    const expected = toJson({ status: true, message: `Action 'text.${name}' executed`, data })
    for (const [surface, url, payload] of [
      ['endpoint', '/api/services', { intent: 'execute', service: 'text', action: name, payload: {} }],
      ['per-action route', `/api/services/text/${name}`, {}],
    ] as const) {
      const answer = await server.app.inject({ method: 'POST', url, payload })
      t.equal(answer.statusCode, 200, `${name} via ${surface}: status`)
      t.equal(answer.headers['content-type'], 'application/json; charset=utf-8', `${name} via ${surface}: content type`)
      t.equal(answer.body, expected, `${name} via ${surface}: body`)
    }
  }
  // The two cases whose shortcut would differ, spelled out.
  const own = await server.app.inject({ method: 'POST', url: '/api/services/text/ownToJson', payload: {} })
  t.same(own.json().data, { key: 'data' }, 'the data\'s own toJSON is called with the key "data"')
  const big = await server.app.inject({ method: 'POST', url: '/api/services/text/bigint', payload: {} })
  t.same(big.json().data, { id: '12345678901234567890', list: ['1'] }, 'a BigInt is written as a string')
})

t.test('data JSON cannot write (a cycle) answers as before: the 500 envelope', async (t) => {
  const cyclic = createAction({
    name: 'cyclic',
    description: 'Answers with a value that refers to itself',
    handler: () => {
      const value: Record<string, unknown> = { a: 1 }
      value.self = value
      return Ok(value)
    },
  })
  const server = await buildServer({ services: [createService({ name: 'loop', description: 'A cycle', actions: [cyclic] })] })
  t.teardown(() => server.close())
  const answer = await server.app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'execute', service: 'loop', action: 'cyclic', payload: {} } })
  t.equal(answer.statusCode, 500)
  t.equal(answer.json().status, false)
  t.notMatch(answer.body, /at .*\.js|circular/i, 'no stack trace, no serializer detail')
})
