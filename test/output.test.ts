import t from 'tap'
import Type from 'typebox'
import { z } from 'zod'
import { createAction, createService, Err, messages, Ok } from '../lib/index.js'
import { buildServer, execute } from './helpers/server.js'

// Output schemas: the success envelope is written by a serializer compiled (at its first use) from the action's
// `output`, which drops every field the schema does not list, and never sends a value that does not match.

const Account = Type.Object({ id: Type.Integer(), name: Type.String(), roles: Type.Array(Type.Object({ name: Type.String() })) })
const leaky = { id: 1, name: 'Ada', password: 'hunter2', roles: [{ name: 'admin', internalNote: 'x' }] }

const service = createService({
  name: 'accounts',
  description: 'Output schemas',
  actions: [
    createAction({ name: 'typebox', description: 'TypeBox output', output: Account, handler: () => Ok(leaky) }),
    createAction({
      name: 'zod',
      description: 'zod output',
      output: z.object({ id: z.number(), name: z.string(), roles: z.array(z.object({ name: z.string() })) }),
      handler: () => Ok(leaky),
    }),
    createAction({ name: 'wrapped', description: 'A non-object output', output: Type.Array(Type.Integer()), handler: () => Ok([1, 2]) }),
    createAction({ name: 'refuses', description: 'Err is not serialized by the output schema', output: Account, handler: () => Err('no such account') }),
    // A value that does not match: `name` is missing. Cast, since the types would refuse it.
    createAction({ name: 'mismatch', description: 'Does not match', output: Account, handler: () => Ok({ id: 1, password: 'hunter2' } as never) }),
    createAction({ name: 'plain', description: 'No output schema: JSON.stringify as before', handler: () => Ok(leaky) }),
  ],
})

t.test('output schemas', async (t) => {
  const server = await buildServer({ services: [service], rest: { openapi: { actionRoutes: true } } })
  t.teardown(() => server.close())
  const { app } = server
  const stripped = { id: 1, name: 'Ada', roles: [{ name: 'admin' }] }

  t.test('undeclared fields are dropped, nested ones too (TypeBox)', async (t) => {
    const answer = await execute(app, 'accounts', 'typebox')
    t.equal(answer.statusCode, 200)
    t.same(answer.body, { status: true, message: messages.executed('accounts', 'typebox'), data: stripped })
    t.match(answer.headers['content-type'], /^application\/json/)
  })
  t.test('undeclared fields are dropped (zod, through its JSON Schema output)', async (t) => {
    const answer = await execute(app, 'accounts', 'zod')
    t.same(answer.body, { status: true, message: messages.executed('accounts', 'zod'), data: stripped })
  })
  t.test('the per-action route serializes the same way', async (t) => {
    const response = await app.inject({ method: 'POST', url: '/api/services/accounts/typebox', payload: {} })
    t.same(response.json(), { status: true, message: messages.executed('accounts', 'typebox'), data: stripped })
  })
  t.test('a non-object value is data.result', async (t) => {
    t.same((await execute(app, 'accounts', 'wrapped')).body, { status: true, message: messages.executed('accounts', 'wrapped'), data: { result: [1, 2] } })
  })
  t.test('an Err keeps its envelope', async (t) => {
    const answer = await execute(app, 'accounts', 'refuses')
    t.equal(answer.statusCode, 400)
    t.same(answer.body, { status: false, message: 'no such account', data: {} })
  })
  t.test('a value that does not match is a 500 that leaks nothing', async (t) => {
    const response = await app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'execute', service: 'accounts', action: 'mismatch', payload: {} } })
    t.equal(response.statusCode, 500)
    t.same(response.json(), { status: false, message: messages.internal, data: {} })
    t.notMatch(response.body, /hunter2/)
  })
  t.test('without an output schema nothing changes', async (t) => {
    t.same((await execute(app, 'accounts', 'plain')).body.data, leaky)
  })
})

t.test('MCP tools write the value through the same output schema', async (t) => {
  const { createEngine } = await import('../lib/index.js')
  const { createToolRegistry, toToolResult } = await import('../lib/mcp/tools.js')
  const registry = createToolRegistry(createEngine({ services: [service] }))
  const target = registry.targets.get('accounts_typebox')!
  const stripped = { id: 1, name: 'Ada', roles: [{ name: 'admin' }] }
  t.same(toToolResult(Ok(leaky), target), { content: [{ type: 'text', text: JSON.stringify(stripped) }], structuredContent: stripped })
  const mismatch = toToolResult(Ok({ id: 1, password: 'hunter2' }), target)
  t.same(mismatch, { isError: true, content: [{ type: 'text', text: messages.internal }] })
  t.same(toToolResult(Ok([1, 2]), registry.targets.get('accounts_wrapped')!), { content: [{ type: 'text', text: '[1,2]' }], structuredContent: { result: [1, 2] } })
})

t.test('a writer is compiled at its first use, once: a start compiles none', async (t) => {
  const { compileEnvelopeSerializer, compileEventWriter } = await import('../lib/output.js')
  // Compiling reads the schema; a getter counts the reads.
  const counted = () => {
    const read = { count: 0 }
    const schema = { type: 'object', properties: { get name() { read.count++; return { type: 'string' } } }, required: ['name'] }
    return { read, schema }
  }
  const envelope = counted()
  const serialize = compileEnvelopeSerializer(envelope.schema)
  t.equal(envelope.read.count, 0, 'not compiled when made (at boot)')
  t.equal(serialize({ status: true, message: 'ok', data: { name: 'Ada', password: 'x' } as never }), '{"status":true,"message":"ok","data":{"name":"Ada"}}')
  const compiled = envelope.read.count
  t.ok(compiled > 0, 'compiled at the first use')
  t.equal(serialize({ status: true, message: 'ok', data: { name: 'Bo' } as never }), '{"status":true,"message":"ok","data":{"name":"Bo"}}')
  t.equal(envelope.read.count, compiled, 'kept: not compiled again')

  const events = counted()
  const write = compileEventWriter(events.schema)
  t.equal(events.read.count, 0, 'an event writer neither')
  t.equal(write({ name: 'Ada', secret: 1 }), '{"name":"Ada"}')
  t.ok(events.read.count > 0)
  t.throws(() => compileEventWriter({ type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] })({}), 'a value the schema refuses still throws, at the first use too')
})
