import t from 'tap'
import type { AddressInfo } from 'node:net'
import Type from 'typebox'
import { z } from 'zod'
import { createClient, clientErrorCodes, isDeclaredError } from '../lib/client/index.js'
import { createEngine, createServer, Fail, isActionsError, messages, Ok, type Action, type Service } from '../lib/index.js'
import { declaredServices } from './helpers/declared-errors.js'
import { connectClient, startMcpServer } from './helpers/mcp.js'
import type { TapTest } from './helpers/postgres.js'
import { buildServer } from './helpers/server.js'

// Declared errors over a real socket: the declared status, `data: { code, ...data }` written through
// the data schema, and every other envelope byte for byte as before.

async function listening(t: TapTest) {
  const server = await buildServer({ services: declaredServices, rest: { host: '127.0.0.1', openapi: { actionRoutes: true } } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  return { server, origin: `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}` }
}

async function call(origin: string, action: string, payload: Record<string, unknown>, path = '/api/services') {
  const body = path === '/api/services' ? { intent: 'execute', service: 'tasks', action, payload } : payload
  const response = await fetch(`${origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() }
}

t.test('the wire: status, message, data with the code beside it', async (t) => {
  const { origin } = await listening(t)
  const get = (id: string) => call(origin, 'get', { id })

  t.same(await get('t-9'), { status: 404, type: 'application/json; charset=utf-8', text: '{"status":false,"message":"No such task","data":{"code":"NOT_FOUND","id":"t-9"}}' })
  t.equal((await get('custom')).text, '{"status":false,"message":"Task custom does not exist","data":{"code":"NOT_FOUND","id":"custom"}}', "the handler's message wins")
  t.same(await get('gone'), { status: 410, type: 'application/json; charset=utf-8', text: '{"status":false,"message":"The task was archived","data":{"code":"GONE"}}' })
  t.equal((await get('locked')).status, 400, 'status defaults to 400')
  t.equal((await get('locked')).text, '{"status":false,"message":"LOCKED","data":{"code":"LOCKED"}}', 'message defaults to the code')
  t.same(await get('quota'), { status: 402, type: 'application/json; charset=utf-8', text: '{"status":false,"message":"QUOTA","data":{"code":"QUOTA","limit":3}}' }, 'a zod data schema')
  t.equal((await get('leak')).text, '{"status":false,"message":"No such task","data":{"code":"NOT_FOUND","id":"leak"}}', 'a property outside the schema never leaves')
  t.same(await get('mismatch'), { status: 500, type: 'application/json; charset=utf-8', text: `{"status":false,"message":"${messages.internal}","data":{}}` }, 'data that does not match its schema is the 500, nothing of it sent')

  // Unchanged: a plain Err, an undeclared code (plain Err of its text), framework failures.
  t.same(await get('plain'), { status: 400, type: 'application/json; charset=utf-8', text: '{"status":false,"message":"a plain Err","data":{}}' })
  t.same((await get('undeclared')).text, '{"status":false,"message":"NOPE","data":{}}', 'an undeclared code answers as a plain Err')
  t.equal((await get('undeclared')).status, 400)
  const invalid = await call(origin, 'get', { id: 7 })
  t.equal(invalid.status, 400)
  t.match(JSON.parse(invalid.text), { status: false, message: messages.validationFailed, data: { errors: [{ path: '/id' }] } })
  t.same(await call(origin, 'nope', {}), { status: 400, type: 'application/json; charset=utf-8', text: `{"status":false,"message":"${messages.actionNotFound('tasks', 'nope')}","data":{}}` })
  t.equal((await get('t-1')).text, `{"status":true,"message":"Action 'tasks.get' executed","data":{"id":"t-1","title":"Write the docs"}}`)

  // The per-action route is the same dispatch.
  t.same(await call(origin, 'update', { id: 'a', version: 5 }, '/api/services/tasks/update'), {
    status: 409,
    type: 'application/json; charset=utf-8',
    text: '{"status":false,"message":"Changed by someone else","data":{"code":"CONFLICT","version":1}}',
  })
  t.equal((await call(origin, 'update', { id: 'a', version: 1 }, '/api/services/tasks/update')).text, `{"status":true,"message":"Action 'tasks.update' executed","data":{"id":"a","version":2}}`)
})

t.test("a critical hook's declared error is the action's answer when the action declares the code", async (t) => {
  const { origin } = await listening(t)
  t.same(await call(origin, 'remove', { id: 't-2' }), {
    status: 404,
    type: 'application/json; charset=utf-8',
    text: '{"status":false,"message":"Nothing to remove","data":{"code":"NOT_FOUND","id":"t-2"}}',
  }, "with the guarded action's own status and message")
  t.equal((await call(origin, 'remove', { id: 't-1' })).status, 200)
  const archived = await call(origin, 'archive', { id: 't-2' })
  t.equal(archived.status, 400, 'an action that does not declare it: the hook failure as before')
  t.equal(archived.text, `{"status":false,"message":"${messages.hookFailed('tasks.exists', 'NOT_FOUND')}","data":{}}`)
})

t.test("data that does not match its schema: the 500, logged with the action and the code", async (t) => {
  const lines: Array<Record<string, unknown>> = []
  const stream = { write: (line: string) => void lines.push(JSON.parse(line)) }
  const server = await buildServer({ services: declaredServices, rest: { fastify: { logger: { level: 'error', stream } } } })
  t.teardown(() => server.close())
  const answer = await server.app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'execute', service: 'tasks', action: 'get', payload: { id: 'mismatch' } } })
  t.equal(answer.statusCode, 500)
  t.equal(answer.body, `{"status":false,"message":"${messages.internal}","data":{}}`)
  const logged = lines.find((line) => line.code === 'FA_ERR_OUTPUT_MISMATCH')
  t.match(logged, { action: 'tasks.get', msg: /^'tasks\.get' returned Fail\('NOT_FOUND'\) with data that does not match its schema: / })
})

t.test('app.inject and the engine see the same failure', async (t) => {
  const server = await buildServer({ services: declaredServices })
  t.teardown(() => server.close())
  const answer = await server.app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'execute', service: 'tasks', action: 'get', payload: { id: 'x' } } })
  t.equal(answer.statusCode, 404)
  t.same(answer.json(), { status: false, message: 'No such task', data: { code: 'NOT_FOUND', id: 'x' } })
  const result = await server.engine.executeAction('tasks', 'get', { id: 'x' }, server.context)
  t.match(result, { ok: false, error: 'No such task', code: 'NOT_FOUND', data: { id: 'x' } })
})

t.test('the client narrows on the code and tells a declared error from a transport failure', async (t) => {
  const { origin } = await listening(t)
  const api = createClient<typeof declaredServices>({ baseUrl: `${origin}/api` })

  const missing = await api.tasks.get({ id: 't-9' })
  t.equal(missing.ok, false)
  if (!missing.ok) {
    t.same(missing.error, { status: false, message: 'No such task', data: { code: 'NOT_FOUND', id: 't-9' }, httpStatus: 404, code: 'NOT_FOUND' })
    t.equal(isDeclaredError(missing.error), true)
    if (missing.error.code === 'NOT_FOUND') t.equal(missing.error.data.id, 't-9', 'data typed as NOT_FOUND’s')
  }
  const conflict = await api.tasks.update({ id: 'a', version: 3 })
  t.ok(!conflict.ok && conflict.error.code === 'CONFLICT' && conflict.error.data.version === 1)

  const plain = await api.tasks.get({ id: 'plain' })
  t.ok(!plain.ok && plain.error.code === undefined && !isDeclaredError(plain.error), 'a plain Err has no code')
  const invalid = await api.tasks.get({ id: 5 as unknown as string })
  t.ok(!invalid.ok && invalid.error.code === undefined && !isDeclaredError(invalid.error), 'a framework failure is not declared')

  const unreachable = createClient<typeof declaredServices>({ baseUrl: 'http://127.0.0.1:1/api' })
  const network = await unreachable.tasks.get({ id: 't-9' })
  t.ok(!network.ok && network.error.code === clientErrorCodes.network && !isDeclaredError(network.error), 'a transport failure is not declared')
  const untyped = await createClient({ baseUrl: `${origin}/api` }).invoke('tasks', 'get', { id: 'gone' })
  t.ok(!untyped.ok && isDeclaredError(untyped.error) && untyped.error.code === 'GONE', 'untyped calls see the code too')
})

t.test('explore and schema list the declared errors', async (t) => {
  const server = await buildServer({ services: declaredServices })
  t.teardown(() => server.close())
  const discover = async (intent: string, action: string, payload: Record<string, unknown> = {}) =>
    (await server.app.inject({ method: 'POST', url: '/api/services', payload: { intent, service: 'tasks', action, payload } })).json()
  const explored = await discover('explore', 'update')
  t.same(explored.data.errors, {
    CONFLICT: { status: 409, message: 'Changed by someone else', data: { type: 'object', properties: { version: { type: 'integer' } }, required: ['version'] } },
  })
  t.same((await discover('explore', 'get')).data.errors.GONE, { status: 410, message: 'The task was archived', data: null })
  t.notOk('errors' in (await discover('explore', 'ping')).data, 'an action without declared errors answers as before')
  const schema = await discover('schema', 'update', { output: true })
  t.same(Object.keys(schema.data.update), ['input', 'output', 'errors'])
  t.equal(schema.data.update.errors.CONFLICT.status, 409)
  t.same(Object.keys((await discover('schema', 'ping', { output: true })).data.ping), ['input', 'output'])
  t.same((await discover('schema', 'update')).data.update, (await discover('schema', 'update', { output: true })).data.update.input, 'the plain schema intent is the input schema, as the specification says')
})

t.test('MCP: an isError result whose structured content carries the code and data', async (t) => {
  const server = await startMcpServer(t, { services: declaredServices })
  const client = await connectClient(t, server.url)
  const missing = await client.callTool({ name: 'tasks_get', arguments: { id: 't-9' } })
  t.same(missing, {
    isError: true,
    content: [{ type: 'text', text: 'No such task' }, { type: 'text', text: '{"code":"NOT_FOUND","id":"t-9"}' }],
    structuredContent: { code: 'NOT_FOUND', id: 't-9' },
  })
  const leak = await client.callTool({ name: 'tasks_get', arguments: { id: 'leak' } })
  t.same(leak.structuredContent, { code: 'NOT_FOUND', id: 'leak' }, 'written through the schema')
  // A tool with an outputSchema: the code and data in the text (the SDK client would check structuredContent against the outputSchema).
  const conflict = await client.callTool({ name: 'tasks_update', arguments: { id: 'a', version: 4 } })
  t.same(conflict, { isError: true, content: [{ type: 'text', text: 'Changed by someone else' }, { type: 'text', text: '{"code":"CONFLICT","version":1}' }] })
  const plain = await client.callTool({ name: 'tasks_get', arguments: { id: 'plain' } })
  t.same(plain, { isError: true, content: [{ type: 'text', text: 'a plain Err' }] }, 'a plain Err as before')
})

t.test('boot refuses a malformed declaration with FA_ERR_CONFIG', async (t) => {
  const boot = (errors: unknown) => {
    const action = { name: 'a', description: '', errors, handler: () => Ok({}) } as unknown as Action
    return () => createEngine({ services: [{ name: 's', description: '', actions: [action] } satisfies Service] })
  }
  const refuses = (errors: unknown, message: string) => {
    try {
      boot(errors)()
      t.fail(`accepted ${JSON.stringify(errors)}`)
    } catch (error) {
      t.ok(isActionsError(error, 'FA_ERR_CONFIG'), 'FA_ERR_CONFIG')
      t.equal((error as Error).message, message)
    }
  }
  refuses([], messages.errorsNotObject('s.a'))
  refuses('NOT_FOUND', messages.errorsNotObject('s.a'))
  refuses({ notFound: {} }, messages.errorCodeInvalid('s.a', 'notFound'))
  refuses({ '1X': {} }, messages.errorCodeInvalid('s.a', '1X'))
  refuses({ 'NOT-FOUND': {} }, messages.errorCodeInvalid('s.a', 'NOT-FOUND'))
  refuses({ FA_ERR_VALIDATION: {} }, messages.errorCodeReserved('s.a', 'FA_ERR_VALIDATION'))
  refuses({ FA_CLIENT_TIMEOUT: {} }, messages.errorCodeReserved('s.a', 'FA_CLIENT_TIMEOUT'))
  refuses({ X: 404 }, messages.errorDeclarationInvalid('s.a', 'X'))
  refuses({ X: { status: 200 } }, messages.errorStatusInvalid('s.a', 'X', 200))
  refuses({ X: { status: 600 } }, messages.errorStatusInvalid('s.a', 'X', 600))
  refuses({ X: { status: 404.5 } }, messages.errorStatusInvalid('s.a', 'X', 404.5))
  refuses({ X: { status: '404' } }, messages.errorStatusInvalid('s.a', 'X', '404'))
  refuses({ X: { message: 42 } }, messages.errorMessageInvalid('s.a', 'X'))
  refuses({ X: { data: Type.String() } }, messages.errorDataNotObject('s.a', 'X'))
  refuses({ X: { data: Type.Array(Type.String()) } }, messages.errorDataNotObject('s.a', 'X'))
  refuses({ X: { data: Type.Object({ code: Type.String() }) } }, messages.errorDataHasCode('s.a', 'X'))
  refuses({ X: { data: z.object({ code: z.number() }) } }, messages.errorDataHasCode('s.a', 'X'))
  refuses({ X: { data: 'object' } }, messages.errorDataNoJsonSchema('s.a', 'X'))
  const noJsonSchema = { '~standard': { version: 1, vendor: 'x', validate: (value: unknown) => ({ value }) } }
  refuses({ X: { data: noJsonSchema } }, messages.errorDataNoJsonSchema('s.a', 'X'))
  t.doesNotThrow(boot({}), 'an empty declaration is no declaration')
  t.doesNotThrow(boot({ X_1: { status: 599, message: 'm', data: Type.Object({}) } }))

  // createServer refuses it the same way.
  const bad = { name: 'a', description: '', errors: { lower: {} }, handler: () => Fail('lower') } as unknown as Action
  await t.rejects(createServer({ serverName: 'x', logServices: false, forceNewInstance: true, services: [{ name: 's', description: '', actions: [bad] }] }), {
    code: 'FA_ERR_CONFIG',
    message: messages.errorCodeInvalid('s.a', 'lower'),
  })
})
