/**
 * DNS rebinding (issue 30, finding 3): a server bound to loopback answers only loopback Host names
 * unless `rest.allowedHosts` lists more; the MCP endpoint serves a request carrying an `Origin` only
 * when it is the server's own or listed. Over real sockets: a rebinding page sends its own name in
 * `Host` and its own origin in `Origin`.
 */
import { connect, type AddressInfo } from 'node:net'
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js'
import { fastifyActions, messages } from '../lib/index.js'
import { compileAllowedHosts, hostnameOf, isLoopbackAddress } from '../plugins/hosts.js'
import { echoService } from './helpers/fixtures.js'
import { rawRequest } from './helpers/raw-http.js'
import { buildServer, type TestConfig } from './helpers/server.js'

const hostRefused = { status: false, message: messages.hostNotAllowed, data: {} }
const originRefused = { status: false, message: messages.originNotAllowed, data: {} }
const explore = JSON.stringify({ intent: 'explore', service: '*', action: '*', payload: {} })
const json = { 'content-type': 'application/json' }
const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'rebinding-page', version: '1' } },
})

async function listening(t: Test, config: TestConfig = {}, host = '127.0.0.1') {
  const server = await buildServer({
    ...config,
    rest: { enableStatus: true, mcp: { enabled: true }, openapi: { enabled: true, reference: false }, ...(config.rest || {}) },
  })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host })
  return { server, port: (server.app.server.address() as AddressInfo).port }
}

t.test('bound to 127.0.0.1: a foreign Host gets the 403 envelope on every route, loopback names are served', async (t) => {
  const { port } = await listening(t)
  const targets = [
    { method: 'POST', path: '/api/services', body: explore, headers: json },
    { method: 'POST', path: '/api/services/tasks/echo', body: JSON.stringify({ title: 'a', count: 1 }), headers: json },
    { method: 'GET', path: '/api/openapi.json' },
    { method: 'POST', path: '/api/mcp', body: initialize, headers: mcpHeaders },
    { method: 'GET', path: '/status' },
    { method: 'GET', path: '/nowhere' },
  ]
  for (const target of targets) {
    const refused = await rawRequest(port, { ...target, headers: { ...target.headers, host: 'attacker.example' } })
    t.equal(refused.status, 403, `${target.method} ${target.path}`)
    t.same(refused.json, hostRefused, `${target.method} ${target.path}`)
    t.notOk(refused.headers['access-control-allow-origin'], 'no CORS header either')
  }
  for (const host of ['attacker.example:' + port, 'localhost.attacker.example', '127.0.0.1.nip.io', 'evil', '[::2]', '10.0.0.1', '[::1', 'x:y']) {
    const refused = await rawRequest(port, { method: 'POST', path: '/api/services', body: explore, headers: { ...json, host } })
    t.equal(refused.status, 403, host)
  }
  for (const host of [`localhost:${port}`, 'localhost', `127.0.0.1:${port}`, '127.9.9.9', `[::1]:${port}`, 'app.localhost', 'LocalHost.']) {
    const served = await rawRequest(port, { method: 'POST', path: '/api/services', body: explore, headers: { ...json, host } })
    t.equal(served.status, 200, host)
    t.equal(served.json.status, true, host)
  }
  // The hook keeps the verdict of the last Host: alternating ones each get their own.
  for (const host of ['localhost', 'attacker.example', 'localhost', 'attacker.example', 'attacker.example', 'localhost']) {
    const answer = await rawRequest(port, { method: 'POST', path: '/api/services', body: explore, headers: { ...json, host } })
    t.equal(answer.status, host === 'localhost' ? 200 : 403, `alternating: ${host}`)
  }
})

t.test('a request without Host (HTTP/1.0, a health check) is served: browsers always send one', async (t) => {
  const { port } = await listening(t)
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end('GET /status HTTP/1.0\r\n\r\n'))
    let text = ''
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()))
    socket.on('end', () => resolve(text))
    socket.on('error', reject)
  })
  t.match(answer, /^HTTP\/1\.1 200 /)
})

t.test('rest.allowedHosts: listed names and domains are served, others refused; loopback names stay allowed', async (t) => {
  const { port } = await listening(t, { rest: { allowedHosts: ['api.example.com', '.example.org'] } })
  for (const host of ['api.example.com', 'API.example.com:8443', 'example.org', 'a.b.example.org', `localhost:${port}`]) {
    const served = await rawRequest(port, { method: 'POST', path: '/api/services', body: explore, headers: { ...json, host } })
    t.equal(served.status, 200, host)
  }
  for (const host of ['www.example.com', 'example.com', 'badexample.org', 'attacker.example']) {
    const refused = await rawRequest(port, { method: 'POST', path: '/api/services', body: explore, headers: { ...json, host } })
    t.same({ status: refused.status, body: refused.json }, { status: 403, body: hostRefused }, host)
  }
})

t.test("rest.allowedHosts: ['*'] serves any Host", async (t) => {
  const { port } = await listening(t, { rest: { allowedHosts: ['*'] } })
  const served = await rawRequest(port, { method: 'POST', path: '/api/services', body: explore, headers: { ...json, host: 'attacker.example' } })
  t.equal(served.status, 200)
})

t.test('not listening (inject): no check unless configured', async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  const served = await server.app.inject({ method: 'POST', url: '/api/services', headers: { host: 'attacker.example' }, payload: JSON.parse(explore) })
  t.equal(served.statusCode, 200)
  const strict = await buildServer({ rest: { allowedHosts: ['api.example.com'] } })
  t.teardown(() => strict.close())
  const refused = await strict.app.inject({ method: 'POST', url: '/api/services', headers: { host: 'attacker.example' }, payload: JSON.parse(explore) })
  t.same({ status: refused.statusCode, body: refused.json() }, { status: 403, body: hostRefused })
})

t.test('rest.allowedHosts must be a list of names', async (t) => {
  for (const bad of ['localhost', [1], [''], {}]) {
    await t.rejects(buildServer({ rest: { allowedHosts: bad as never } }), { code: 'FA_ERR_CONFIG', message: /rest\.allowedHosts must be an array of host names/ })
  }
})

t.test('plugin mode: the check covers the plugin routes, the host app keeps its own', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  app.get('/host/own', async () => ({ own: true }))
  await app.register(fastifyActions, { serverName: 'p', logServices: false, services: [echoService], rest: { baseUrl: '/api', allowedOrigins: [], discovery: { enabled: true } } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const refused = await rawRequest(port, { method: 'POST', path: '/api/services', body: explore, headers: { ...json, host: 'attacker.example' } })
  t.same({ status: refused.status, body: refused.json }, { status: 403, body: hostRefused })
  const own = await rawRequest(port, { path: '/host/own', headers: { host: 'attacker.example' } })
  t.equal(own.status, 200, "the host app's own routes are its business")
})

t.test('MCP: an Origin that is neither the server own nor listed is refused before the SDK runs', async (t) => {
  const { port } = await listening(t)
  const post = (headers: Record<string, string>) => rawRequest(port, { method: 'POST', path: '/api/mcp', body: initialize, headers: { ...mcpHeaders, ...headers } })
  for (const origin of ['http://attacker.example', `https://localhost:${port}`, `http://localhost:${port + 1}`, 'null']) {
    const refused = await post({ host: `localhost:${port}`, origin })
    t.same({ status: refused.status, body: refused.json }, { status: 403, body: originRefused }, origin)
  }
  const own = await post({ host: `localhost:${port}`, origin: `http://localhost:${port}` })
  t.equal(own.status, 200, 'its own origin')
  t.equal(own.json.result.serverInfo.name.length > 0, true)
  const agent = await post({ host: `127.0.0.1:${port}` })
  t.equal(agent.status, 200, 'an agent sends no Origin')
})

t.test("MCP: allowedOrigins [] lists no page; listed origins and ['*'] are served", async (t) => {
  const { port } = await listening(t, { rest: { allowedOrigins: ['https://app.example'] } })
  const post = (p: number, origin: string) => rawRequest(p, { method: 'POST', path: '/api/mcp', body: initialize, headers: { ...mcpHeaders, host: `localhost:${p}`, origin } })
  t.equal((await post(port, 'https://app.example')).status, 200)
  t.equal((await post(port, 'https://other.example')).status, 403)
  const open = await listening(t, { rest: { allowedOrigins: ['*'] } })
  t.equal((await post(open.port, 'https://anyone.example')).status, 200)
})

t.test('MCP: the preflight allows Mcp-Protocol-Version', async (t) => {
  const { port } = await listening(t, { rest: { allowedOrigins: ['https://app.example'] } })
  const preflight = await rawRequest(port, {
    method: 'OPTIONS',
    path: '/api/mcp',
    headers: { host: `localhost:${port}`, origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,mcp-protocol-version' },
  })
  t.equal(preflight.status, 204)
  t.match(String(preflight.headers['access-control-allow-headers']), /Mcp-Protocol-Version/)
})

t.test('MCP: an unknown tool answers -32602 "Unknown tool: <name>", not doubled', async (t) => {
  const { port } = await listening(t)
  const call = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'nope', arguments: {} } })
  const answer = await rawRequest(port, { method: 'POST', path: '/api/mcp', body: call, headers: { ...mcpHeaders, 'mcp-protocol-version': '2025-06-18' } })
  t.same(answer.json, { jsonrpc: '2.0', id: 3, error: { code: ErrorCode.InvalidParams, message: messages.mcpUnknownTool('nope') } })
})

t.test('helpers: Host names and loopback addresses', async (t) => {
  t.equal(hostnameOf('Example.COM:80'), 'example.com')
  t.equal(hostnameOf('[::1]:8000'), '[::1]')
  t.equal(hostnameOf('[::1]x'), undefined)
  t.equal(hostnameOf('a:b'), undefined)
  t.ok(isLoopbackAddress('127.0.0.1'))
  t.ok(isLoopbackAddress('::1'))
  t.ok(isLoopbackAddress('::ffff:127.0.0.1'))
  t.notOk(isLoopbackAddress('0.0.0.0'))
  t.notOk(isLoopbackAddress('::'))
  t.notOk(isLoopbackAddress('10.0.0.1'))
  const allowed = compileAllowedHosts(['.example.com'])
  t.ok(allowed('example.com'))
  t.ok(allowed('a.example.com'))
  t.notOk(allowed('notexample.com'))
  t.ok(allowed('localhost'))
})


t.test('MCP on while discovery hides the actions: one boot warning; none with requireAuth or open discovery', async (t) => {
  const { recordingLogger } = await import('./helpers/logger.js')
  const cases: Array<[string, TestConfig['rest'], boolean]> = [
    ['discovery off', { discovery: { enabled: false }, mcp: { enabled: true } }, true],
    ['discovery behind its secret', { discovery: { enabled: true, secret: 's' }, mcp: { enabled: true } }, true],
    ['discovery open', { discovery: { enabled: true }, mcp: { enabled: true } }, false],
    ['requireAuth', { discovery: { enabled: false }, mcp: { enabled: true, requireAuth: true } }, false],
  ]
  for (const [label, rest, warned] of cases) {
    const { logger, entries } = recordingLogger()
    const server = await buildServer({ resources: { logger }, auth: { secret: 'a-secret-long-enough-for-hs256-tokens' }, rest })
    await server.close()
    const warnings = entries.filter((entry) => entry.level === 'warn' && entry.message.startsWith('rest.mcp is on'))
    t.equal(warnings.length, warned ? 1 : 0, label)
    if (warned) t.match(warnings[0]!.message, /tools\/list still shows every action visible to MCP to any caller.*rest\.mcp\.requireAuth/)
  }
})
