/**
 * Values the wire cannot carry. An output schema that allows any value (`Type.Any()`) holding a
 * function, a symbol or `undefined` made the compiled serializer write `{"a":undefined}`, text no
 * JSON reader accepts; declared-error data off its schema (`{ id: 5 }` for a string) was coerced to
 * `"5"`. Both are now the logged 500 (`FA_ERR_OUTPUT_MISMATCH` with the reason), on REST, SSE and MCP.
 */
import t, { type Test } from 'tap'
import type { AddressInfo } from 'node:net'
import Type from 'typebox'
import { createAction, createService, Fail, messages, Ok } from '../../lib/index.js'
import { openStream } from '../helpers/sse.js'
import { rawPost } from '../helpers/mcp.js'
import { buildServer } from '../helpers/server.js'

const hostile: Record<string, unknown> = {
  function: { a: () => 1 },
  symbol: { a: Symbol('s') },
  toJsonUndefined: { a: { toJSON: () => undefined } },
  inArray: { list: [() => 1, undefined] },
}
// Fine as they are: inside a value JSON.stringify writes (a function in an array is `null`, an
// undefined property is left out), so the text is JSON and nothing fails.
const harmless: Record<string, string> = {
  undefinedProperty: '{}',
  textSaysUndefined: '{"a":"undefined"}',
  nested: '{"a":{"deep":[{"x":1},null]}}',
}
const harmlessValues: Record<string, unknown> = { undefinedProperty: { a: undefined }, textSaysUndefined: { a: 'undefined' }, nested: { a: { deep: [{ x: 1 }, () => 2] } } }

const output = Type.Object({ a: Type.Optional(Type.Any()), list: Type.Optional(Type.Array(Type.Any())) })
const input = Type.Object({ mode: Type.String() })
const valueOf = (mode: string) => (mode in hostile ? hostile[mode] : harmlessValues[mode])

const give = createAction({ name: 'give', description: 'Returns a hostile value', validation: input, output, handler: (data) => Ok(valueOf(data.mode) as never) })
const events = createAction({
  name: 'events',
  description: 'Yields a fine event, then a hostile one',
  validation: input,
  output,
  handler: async function* (data) {
    yield { a: 1 }
    yield valueOf(data.mode) as never
  },
})
const errors = { NOT_FOUND: { status: 404, data: Type.Object({ id: Type.String(), tags: Type.Optional(Type.Array(Type.String())) }) } }
const refuse = createAction({
  name: 'refuse',
  description: 'Fails with declared data off its schema',
  validation: input,
  errors,
  handler: (data) => {
    if (data.mode === 'number') return Fail('NOT_FOUND', { id: 5 as unknown as string })
    if (data.mode === 'tags') return Fail('NOT_FOUND', { id: 'a', tags: [1, 2] as unknown as string[] })
    if (data.mode === 'missing') return Fail('NOT_FOUND', {} as { id: string })
    return Fail('NOT_FOUND', { id: 'a' })
  },
})
const refuseLater = createAction({
  name: 'refuseLater',
  description: 'Yields, then fails with declared data off its schema',
  validation: input,
  errors,
  handler: async function* (data) {
    yield { i: 0 }
    if (data.mode === 'number') return Fail('NOT_FOUND', { id: 5 as unknown as string })
    return Fail('NOT_FOUND', { id: 'a' })
  },
})
const services = [createService({ name: 'h', description: 'Hostile values', actions: [give, events, refuse, refuseLater] })]

async function listening(t: Test) {
  const lines: Array<Record<string, unknown>> = []
  const stream = { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) }
  const server = await buildServer({ services, rest: { openapi: { enabled: false, actionRoutes: true }, mcp: { enabled: true }, fastify: { logger: { level: 'error', stream } } } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = server.app.server.address() as AddressInfo
  const logged = () => lines.splice(0).filter((line) => line.code === 'FA_ERR_OUTPUT_MISMATCH')
  return { port, logged }
}

const internal = JSON.stringify({ status: false, message: messages.internal, data: {} })
const post = async (port: number, path: string, body: unknown) => {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return { status: response.status, text: await response.text() }
}
const both = (action: string, payload: unknown): Array<[string, unknown]> => [
  ['/api/services', { intent: 'execute', service: 'h', action, payload }],
  [`/api/services/h/${action}`, payload],
]
const callTool = (port: number, name: string, args: unknown) =>
  rawPost(new URL(`http://127.0.0.1:${port}/api/mcp`), JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }), { 'mcp-protocol-version': '2025-06-18' })

t.test('REST: a value JSON cannot carry is the logged 500, never invalid JSON; harmless ones are written', async (t) => {
  const { port, logged } = await listening(t)
  for (const mode of Object.keys(hostile)) {
    for (const [path, body] of both('give', { mode })) {
      const answer = await post(port, path, body)
      t.same(answer, { status: 500, text: internal }, `${mode} via ${path}`)
      t.match(logged(), [{ action: 'h.give', msg: `'h.give' returned a value that does not match its output schema: ${messages.notJson}` }], `${mode} via ${path}: logged with the reason`)
    }
  }
  for (const [mode, data] of Object.entries(harmless)) {
    const answer = await post(port, '/api/services/h/give', { mode })
    t.same(answer, { status: 200, text: `{"status":true,"message":"${messages.executed('h', 'give')}","data":${data}}` }, mode)
    t.same(logged(), [], `${mode}: nothing logged`)
  }
})

t.test('SSE: a hostile event ends the stream with the 500 error frame, logged; the fine event before it went out', async (t) => {
  const { port, logged } = await listening(t)
  for (const mode of Object.keys(hostile)) {
    const stream = await openStream(port, '/api/services/h/events', { mode })
    await stream.ended
    t.same(stream.events.map((event) => [event.event, event.data]), [['message', '{"a":1}'], ['error', internal]], mode)
    t.notMatch(stream.text(), /undefined/, `${mode}: no invalid JSON on the wire`)
    t.match(logged(), [{ action: 'h.events', msg: new RegExp(messages.notJson.replace(/[()]/g, '\\$&')) }], `${mode}: logged`)
  }
})

t.test('MCP: the same value is the 500 text as a tool error, logged', async (t) => {
  const { port, logged } = await listening(t)
  for (const mode of Object.keys(hostile)) {
    const answer = await callTool(port, 'h_give', { mode })
    t.same(answer.json.result, { isError: true, content: [{ type: 'text', text: messages.internal }] }, mode)
    t.match(logged(), [{ action: 'h.give' }], `${mode}: logged`)
  }
})

t.test('declared-error data off its schema: the logged 500 on REST, SSE and MCP, never coerced', async (t) => {
  const { port, logged } = await listening(t)
  for (const mode of ['number', 'tags', 'missing']) {
    for (const [path, body] of both('refuse', { mode })) {
      t.same(await post(port, path, body), { status: 500, text: internal }, `${mode} via ${path}`)
      t.match(logged(), [{ action: 'h.refuse', msg: /^'h\.refuse' returned Fail\('NOT_FOUND'\) with data that does not match its schema: \/\S*/ }], `${mode} via ${path}: logged`)
    }
    const tool = await callTool(port, 'h_refuse', { mode })
    t.same(tool.json.result, { isError: true, content: [{ type: 'text', text: messages.internal }] }, `${mode} via MCP`)
    t.equal(logged().length, 1, `${mode} via MCP: logged`)
  }
  const stream = await openStream(port, '/api/services/h/refuseLater', { mode: 'number' })
  await stream.ended
  t.same(stream.events.map((event) => [event.event, event.data]), [['message', '{"i":0}'], ['error', internal]], 'a stream ends with the same 500')
  t.equal(logged().length, 1, 'and logs it')
  // Data that matches is written as declared.
  t.same(await post(port, '/api/services/h/refuse', { mode: 'fine' }), { status: 404, text: '{"status":false,"message":"NOT_FOUND","data":{"code":"NOT_FOUND","id":"a"}}' })
  t.same(logged(), [])
})
