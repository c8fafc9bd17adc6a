/**
 * Issue 40: path middleware on `/api/services/admin/*` guarded one way in of three; the endpoint
 * (`{"service":"admin","action":"wipe"}`) and MCP (`tools/call admin_wipe`) ran the action. A guard
 * keyed by action identity (`addGuard({ service, action }, fn)`) is run by the engine's pipeline, so
 * every rule below is driven through all four ways in: the endpoint, the per-action route, MCP over
 * HTTP and MCP over stdio (`fastify-actions mcp`'s serving). Real sockets for the HTTP ones.
 */
import type { AddressInfo } from 'node:net'
import { PassThrough } from 'node:stream'
import Fastify from 'fastify'
import t from 'tap'
const tap = t
import { Type } from 'typebox'
import { serveMcpOverStdio } from '../lib/cli/mcp.js'
import { createAction, createServer, Err, fastifyActions, getActions, Ok, type GuardSelector, type Service } from '../lib/index.js'
import { rawRequest } from './helpers/raw-http.js'

const ran: string[] = []
function action(name: string, validation?: ReturnType<typeof Type.Object>) {
  return createAction({
    name,
    description: `The ${name} action`,
    ...(validation ? { validation } : {}),
    handler: (data: unknown) => {
      ran.push(name)
      return Ok({ ran: name, data })
    },
  })
}
const services: Service[] = [
  // `wipe` validates its input: a guard refuses before validation would.
  { name: 'admin', description: 'Admin', actions: [action('wipe', Type.Object({ confirm: Type.Literal(true) })), action('list')] },
  { name: 'tasks', description: 'Tasks', actions: [action('delete'), action('read')] },
  { name: 'files', description: 'Files', actions: [action('delete'), action('read')] },
]

/** Every rule: what it selects, the payload key that opens it, and its refusal text. */
const rules: Array<{ selector: GuardSelector; key: string; refusal: string }> = [
  { selector: { service: 'admin' }, key: 'admin-key', refusal: 'Admins only' },
  { selector: { service: 'tasks', action: 'delete' }, key: 'task-owner', refusal: 'Only the owner deletes tasks' },
  { selector: { action: 'delete' }, key: 'deleter', refusal: 'Deleting needs the deleter key' },
  { selector: { service: '*', action: 'read' }, key: 'reader', refusal: 'Reading needs the reader key' },
]

const selects = (selector: GuardSelector, service: string, name: string) =>
  (selector.service === undefined || selector.service === '*' || selector.service === service) && (selector.action === undefined || selector.action === '*' || selector.action === name)

function guardFor(rule: (typeof rules)[number]) {
  return ({ payload }: { payload: unknown }) => ((payload as Record<string, unknown> | null)?.[rule.key] === true ? Ok(null) : Err(rule.refusal))
}

type Way = (service: string, name: string, payload: Record<string, unknown>) => Promise<{ status: number; message: string }>

function mcpCall(service: string, name: string, payload: Record<string, unknown>) {
  return { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: `${service}_${name}`, arguments: payload } }
}

/** A tools/call answer (JSON or one SSE `data:` line): 'served' or the error result's text. */
function toolOutcome(text: string): string {
  const line = text.startsWith('{') ? text : (text.split('\n').find((l) => l.startsWith('data: ')) ?? '').slice(6)
  const body = JSON.parse(line) as { result?: { isError?: boolean; content: Array<{ text: string }> }; error?: { message: string } }
  if (body.error) return body.error.message
  return body.result?.isError ? body.result.content[0]!.text : 'served'
}

function waysInto(port: number, app: Parameters<typeof serveMcpOverStdio>[0]['app']): Record<string, Way> {
  const json = { 'content-type': 'application/json' }
  const envelope = (answer: { status: number; json: any }) => ({ status: answer.status, message: answer.json.status ? 'served' : answer.json.message })
  return {
    'the endpoint': async (service, name, payload) =>
      envelope(await rawRequest(port, { method: 'POST', path: '/api/services', headers: json, body: JSON.stringify({ intent: 'execute', service, action: name, payload }) })),
    'the per-action route': async (service, name, payload) => envelope(await rawRequest(port, { method: 'POST', path: `/api/services/${service}/${name}`, headers: json, body: JSON.stringify(payload) })),
    'MCP over HTTP': async (service, name, payload) => {
      const headers = { ...json, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }
      const answer = await rawRequest(port, { method: 'POST', path: '/api/mcp', headers, body: JSON.stringify(mcpCall(service, name, payload)) })
      const message = toolOutcome(answer.text)
      return { status: message === 'served' ? 200 : 403, message }
    },
    'MCP over stdio': async (service, name, payload) => {
      const input = new PassThrough()
      const output = new PassThrough()
      const written = new Promise<string>((resolve) => {
        let text = ''
        output.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve(text))
      })
      const serving = serveMcpOverStdio({ app, path: '/api/mcp', input, output })
      input.end(`${JSON.stringify(mcpCall(service, name, payload))}\n`)
      await serving
      output.end()
      const message = toolOutcome((await written).trim())
      return { status: message === 'served' ? 200 : 403, message }
    },
  }
}

async function drive(t: Parameters<Parameters<typeof tap.test>[0]>[0], ways: Record<string, Way>) {
  const allKeys = Object.fromEntries(rules.map((rule) => [rule.key, true]))
  for (const service of services) {
    for (const { name } of service.actions) {
      const expected = rules.find((rule) => selects(rule.selector, service.name, name))
      for (const [way, send] of Object.entries(ways)) {
        const label = `${service.name}.${name} through ${way}`
        ran.length = 0
        // No key: the first rule that selects the action refuses (403, its text); nothing runs.
        const bare = await send(service.name, name, {})
        if (expected) {
          t.same({ status: bare.status, message: bare.message }, { status: 403, message: expected.refusal }, `${label}: refused`)
          t.same(ran, [], `${label}: the action did not run`)
        } else t.same({ status: bare.status, message: bare.message }, { status: 200, message: 'served' }, `${label}: no rule selects it`)
        // Every key: served (admin.wipe with its valid input).
        ran.length = 0
        const open = await send(service.name, name, { ...allKeys, ...(name === 'wipe' ? { confirm: true } : {}) })
        t.same({ status: open.status, message: open.message }, { status: 200, message: 'served' }, `${label}: every key opens it`)
        t.same(ran, [name], `${label}: ran once`)
      }
    }
  }
}

t.test('every guard rule through the endpoint, the per-action route, MCP over HTTP and MCP over stdio (createServer)', async (t) => {
  const server = await createServer({
    serverName: 'guards',
    logServices: false,
    forceNewInstance: true,
    services,
    rest: { baseUrl: '/api', allowedOrigins: [], openapi: { enabled: true, reference: false }, mcp: { enabled: true } },
  })
  t.teardown(() => server.close())
  for (const rule of rules) server.addGuard(rule.selector, guardFor(rule))
  // Path middleware on the admin routes: it sees the per-action route only (docs/middleware-and-routes.md).
  const seenByMiddleware: string[] = []
  server.rest.addMiddleware('/api/services/admin/*', async (c, next) => {
    seenByMiddleware.push(c.req.path)
    await next()
  })
  await server.rest.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (server.rest.app.server.address() as AddressInfo).port
  await drive(t, waysInto(port, server.rest.app))
  t.ok(seenByMiddleware.length > 0 && seenByMiddleware.every((path) => path.startsWith('/api/services/admin/')), 'the middleware saw only per-action routes')
  t.equal(seenByMiddleware.length, 4, 'two calls on each of the two admin routes, none of the endpoint or MCP calls')
})

t.test('a guard refuses before validation, and before the global before handler and hooks', async (t) => {
  const order: string[] = []
  const server = await createServer({
    serverName: 'guards-order',
    logServices: false,
    forceNewInstance: true,
    services,
    onBeforeActionHandler: () => {
      order.push('global before')
      return Ok(null)
    },
    rest: { baseUrl: '/api', allowedOrigins: [], openapi: { enabled: true, reference: false } },
  })
  t.teardown(() => server.close())
  server.addGuard({ service: 'admin', action: 'wipe' }, () => {
    order.push('guard')
    return Err('No wiping today')
  })
  const answer = await server.rest.app.inject({ method: 'POST', url: '/api/services/admin/wipe', payload: { confirm: 'not a boolean' } })
  t.equal(answer.statusCode, 403)
  t.same(answer.json(), { status: false, message: 'No wiping today', data: {} })
  t.same(order, ['guard'])
  // A guard that throws refuses too (never lets the call through); one that answers no Result is a 500.
  server.addGuard({ service: 'tasks', action: 'read' }, () => {
    throw new Error('guard broke')
  })
  const thrown = await server.rest.app.inject({ method: 'POST', url: '/api/services/tasks/read', payload: {} })
  t.equal(thrown.statusCode, 400)
  t.equal(thrown.json().status, false)
  server.addGuard({ service: 'files', action: 'read' }, (() => 'yes') as never)
  const notAResult = await server.rest.app.inject({ method: 'POST', url: '/api/services/files/read', payload: {} })
  t.equal(notAResult.statusCode, 500)
  t.same(notAResult.json(), { status: false, message: 'Internal server error', data: {} })
})

t.test('bad selectors are refused with FA_ERR_CONFIG', async (t) => {
  const server = await createServer({ serverName: 'guards-bad', logServices: false, forceNewInstance: true, services })
  t.teardown(() => server.close())
  for (const selector of [{ service: '' }, { services: 'admin' }, null, { action: 5 }] as unknown as GuardSelector[]) {
    t.throws(() => server.addGuard(selector, () => Ok(null)), { code: 'FA_ERR_CONFIG' }, JSON.stringify(selector))
  }
  t.throws(() => server.addGuard({ service: 'admin' }, 'no' as never), { code: 'FA_ERR_CONFIG' })
})

t.test('plugin mode: getActions(app).addGuard guards the same ways in', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyActions, { serverName: 'guards-plugin', logServices: false, services, rest: { baseUrl: '/api', allowedOrigins: [], openapi: { enabled: true, reference: false }, mcp: { enabled: true } } })
  for (const rule of rules) getActions(app).addGuard(rule.selector, guardFor(rule))
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as AddressInfo).port
  await drive(t, waysInto(port, app))
})
