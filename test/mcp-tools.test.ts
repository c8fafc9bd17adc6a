import t from 'tap'
import Type from 'typebox'
import { createAction, createEngine, Err, Ok, messages, type Action, type ActionHandler, type Service } from '../lib/index.js'
import { fail } from '../lib/errors.js'
import { createToolRegistry, isTool, MAX_TOOL_NAME, toolNameOf, toToolResult } from '../lib/mcp/tools.js'
import { connectClient, startMcpServer } from './helpers/mcp.js'

const plain = (name: string, extra: Partial<Omit<Action, 'output' | 'handler'>> & { handler?: ActionHandler } = {}): Action => createAction({ name, description: `does ${name}`, handler: () => Ok(name), ...extra })
const registryOf = (...services: Service[]) => createToolRegistry(createEngine({ services }))

t.test('the naming rule: <service>_<action>, other characters become _, long names end with a digest', async (t) => {
  t.equal(toolNameOf('tasks', 'create'), 'tasks_create')
  t.equal(toolNameOf('billing.v2', 'charge card!'), 'billing_v2_charge_card_')
  t.equal(toolNameOf('ünï', 'x-y_z'), '_n__x-y_z')
  const long = toolNameOf('s'.repeat(40), 'a'.repeat(40))
  t.equal(long.length, MAX_TOOL_NAME)
  t.match(long, /^s{40}_a{14}_[0-9a-f]{8}$/)
  t.not(long, toolNameOf('s'.repeat(40), 'a'.repeat(41)), 'the digest keeps long names apart')
  t.equal(toolNameOf('s'.repeat(40), 'a'.repeat(40)), long, 'stable')
})

t.test('which actions are tools', async (t) => {
  t.ok(isTool(plain('a')))
  t.ok(isTool(plain('a', { visibility: { rpc: false, mcp: true } })))
  t.notOk(isTool(plain('a', { visibility: { rest: false } })), 'hidden from REST')
  t.notOk(isTool(plain('a', { visibility: { rest: false, mcp: true } })), 'hidden from REST wins over mcp: true')
  t.notOk(isTool(plain('a', { visibility: { mcp: false } })))
  t.notOk(isTool(plain('a', { isSpecial: { contentType: 'multipart/form-data' } })), 'upload actions take files')
})

t.test('refused at boot: two actions with one tool name, an input schema that is not an object', async (t) => {
  t.throws(
    () => registryOf({ name: 'a_b', description: '', actions: [plain('c')] }, { name: 'a', description: '', actions: [plain('b_c')] }),
    { message: messages.mcpToolNameCollision('a_b_c', 'a_b.c', 'a.b_c') },
  )
  t.doesNotThrow(
    () => registryOf({ name: 'a_b', description: '', actions: [plain('c')] }, { name: 'a', description: '', actions: [plain('b_c', { visibility: { mcp: false } })] }),
    'a collision is solved by hiding one',
  )
  t.throws(() => registryOf({ name: 's', description: '', actions: [plain('n', { validation: Type.String() })] }), {
    message: messages.mcpInputNotObject('s.n', "'string'"),
  })
  t.throws(() => registryOf({ name: 's', description: '', actions: [plain('n', { validation: Type.Union([Type.Object({}), Type.Number()]) })] }), {
    message: messages.mcpInputNotObject('s.n', 'without an object type'),
  })
  const union = registryOf({
    name: 's',
    description: '',
    actions: [plain('u', { validation: Type.Union([Type.Object({ a: Type.String() }), Type.Object({ b: Type.Number() })]) })],
  })
  t.match(union.tools[0].inputSchema, { type: 'object', anyOf: [{ type: 'object' }, { type: 'object' }] }, 'a union of objects is an object')
  const intersect = registryOf({ name: 's', description: '', actions: [plain('i', { validation: { allOf: [Type.Object({ a: Type.String() }), Type.Object({ b: Type.Number() })] } })] })
  t.match(intersect.tools[0].inputSchema, { type: 'object', allOf: [{ type: 'object' }, { type: 'object' }] }, 'so is an intersection of objects')

  const server = startMcpServer(t, { services: [{ name: 's', description: '', actions: [plain('n', { validation: Type.Array(Type.String()) })] }] })
  await t.rejects(server, { message: /action 's\.n' has an input schema 'array'/ }, 'createServer refuses it')
})

t.test('results: Ok as JSON text, Err with the envelope message, failure data after it', async (t) => {
  const target = { service: 's', action: 'a' }
  t.same(toToolResult(Ok({ a: 1 }), target), { content: [{ type: 'text', text: '{"a":1}' }] })
  t.same(toToolResult(Ok(undefined), target), { content: [{ type: 'text', text: 'null' }] })
  t.same(toToolResult(Ok({ big: 12345678901234567890n }), target), { content: [{ type: 'text', text: '{"big":"12345678901234567890"}' }] }, 'BigInt as a string')
  t.same(toToolResult(Err('nope'), target), { isError: true, content: [{ type: 'text', text: 'nope' }] })
  t.same(toToolResult(fail.validation([{ path: '/a', message: 'bad' }]), target), {
    isError: true,
    content: [
      { type: 'text', text: 'Validation failed' },
      { type: 'text', text: '{"errors":[{"path":"/a","message":"bad"}]}' },
    ],
  })
  const circular: Record<string, unknown> = {}
  circular.self = circular
  t.throws(() => toToolResult(Ok(circular), target), TypeError, 'the plugin turns this into the 500 text')
})

t.test('an unexpected error in the adapter never leaks', async (t) => {
  const circular: Record<string, unknown> = {}
  circular.self = circular
  const server = await startMcpServer(t, { services: [{ name: 's', description: '', actions: [plain('loop', { handler: () => Ok(circular) })] }] })
  const client = await connectClient(t, server.url)
  t.same(await client.callTool({ name: 's_loop' }), { isError: true, content: [{ type: 'text', text: messages.internal }] })
})

t.test('the output schema hook point: an action with `output` gets outputSchema and structuredContent', async (t) => {
  // The registry reads `Action.output` (its output-side JSON Schema).
  const withOutput = (name: string, output: unknown, value: unknown) => Object.assign(plain(name, { handler: () => Ok(value) }), { output })
  const service: Service = {
    name: 'out',
    description: '',
    actions: [withOutput('object', Type.Object({ n: Type.Number() }), { n: 1 }), withOutput('list', Type.Array(Type.Number()), [1, 2])],
  }
  const registry = registryOf(service)
  t.same(registry.tools[0].outputSchema, { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] })
  t.same(registry.tools[1].outputSchema, { type: 'object', properties: { result: { type: 'array', items: { type: 'number' } } }, required: ['result'] }, "non-objects wrapped as { result }, the envelope's rule")

  const server = await startMcpServer(t, { services: [service] })
  const client = await connectClient(t, server.url)
  t.same(await client.callTool({ name: 'out_object' }), { content: [{ type: 'text', text: '{"n":1}' }], structuredContent: { n: 1 } })
  t.same(await client.callTool({ name: 'out_list' }), { content: [{ type: 'text', text: '[1,2]' }], structuredContent: { result: [1, 2] } })
})
