import t from 'tap'
import Type from 'typebox'
import { z } from 'zod'
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import { createAction, Err, Ok, messages, type Service } from '../lib/index.js'
import { echoService } from './helpers/fixtures.js'
import { connectClient, rawPost, startMcpServer, textOf } from './helpers/mcp.js'

const SECRET = 'mcp-test-secret-that-is-long-enough'

const whoami = createAction({
  name: 'whoami',
  description: 'The caller, from the JWT',
  isProtected: true,
  handler: (_data, context) => Ok({ userId: context.getUser()?.userId ?? null }),
})
const slow = createAction({ name: 'slow', description: 'Never answers', timeout: 50, handler: () => new Promise<never>(() => {}) })
const upper = createAction({
  name: 'upper',
  description: 'Before hook: upper-cases the title',
  validation: Type.Object({ title: Type.String() }),
  handler: (data) => Ok({ title: data.title.toUpperCase() }),
})
const stamp = createAction({ name: 'stamp', description: 'After hook: stamps the result', handler: (data) => Ok({ ...(data as object), stamped: true }) })
const shout = createAction({
  name: 'shout',
  description: 'Says the title, through hooks',
  validation: Type.Object({ title: Type.String() }),
  hooks: { before: [{ service: 'agents', action: 'upper', isCritical: true }], after: [{ service: 'agents', action: 'stamp', isCritical: true }] },
  handler: (data) => Ok({ said: data.title }),
})
const hidden = createAction({ name: 'hidden', description: 'Not for REST', visibility: { rest: false }, handler: () => Ok('hidden') })
const humansOnly = createAction({ name: 'humansOnly', description: 'Not for agents', visibility: { mcp: false }, handler: () => Ok('humans') })
const upload = createAction({
  name: 'upload',
  description: 'Takes files',
  isSpecial: { contentType: 'multipart/form-data' },
  handler: () => Ok('stored'),
})
const zodSum = createAction({
  name: 'sum',
  description: 'Adds two numbers (zod)',
  validation: z.object({ a: z.number(), b: z.number() }),
  handler: (data) => Ok(data.a + data.b),
})
const agents: Service = {
  name: 'agents',
  description: 'Actions for the MCP tests',
  actions: [whoami, slow, upper, stamp, shout, hidden, humansOnly, upload, zodSum],
}
const services = [echoService, agents]

t.test('initialize: server identity and honest capabilities', async (t) => {
  const server = await startMcpServer(t, { services })
  const client = await connectClient(t, server.url)
  t.same(client.getServerVersion(), { name: 'fastify-actions', version: '0.1.0' }, "the package's own name and version by default")
  t.same(client.getServerCapabilities(), { tools: { listChanged: false } }, 'tools only')

  const named = await startMcpServer(t, { services, rest: { mcp: { name: 'my-tools', version: '2.3.4' } } })
  const other = await connectClient(t, named.url)
  t.same(other.getServerVersion(), { name: 'my-tools', version: '2.3.4' })
})

t.test('tools/list: names, titles, descriptions, schemas; hidden, mcp-hidden and upload actions are absent', async (t) => {
  const server = await startMcpServer(t, { services })
  const client = await connectClient(t, server.url)
  const { tools } = await client.listTools()
  t.same(
    tools.map((tool) => tool.name),
    ['tasks_echo', 'tasks_fails', 'tasks_throws', 'tasks_list', 'agents_whoami', 'agents_slow', 'agents_upper', 'agents_stamp', 'agents_shout', 'agents_sum'],
  )
  const echo = tools.find((tool) => tool.name === 'tasks_echo')!
  t.equal(echo.title, 'tasks.echo')
  t.equal(echo.description, 'Echoes a title and a count')
  t.match(echo.inputSchema, { type: 'object', properties: { title: { type: 'string', minLength: 1 }, count: { type: 'integer' } }, required: ['title', 'count'] })
  t.same(tools.find((tool) => tool.name === 'tasks_fails')!.inputSchema, { type: 'object' }, 'no schema: any object')
  t.match(tools.find((tool) => tool.name === 'agents_sum')!.inputSchema, { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } }, 'Standard Schema through its JSON Schema export')
  for (const tool of tools) {
    t.match(tool.name, /^[a-zA-Z0-9_-]{1,64}$/)
    t.notOk('outputSchema' in tool, 'no output schemas yet')
  }
})

t.test('tools/call: Ok, Err, a thrown handler, invalid input, an unknown tool', async (t) => {
  const server = await startMcpServer(t, { services })
  const client = await connectClient(t, server.url)

  const ok = await client.callTool({ name: 'tasks_echo', arguments: { title: 'a', count: 2 } })
  t.same(ok, { content: [{ type: 'text', text: '{"title":"a","count":2}' }] })
  t.same(await client.callTool({ name: 'tasks_list' }), { content: [{ type: 'text', text: '[1,2,3]' }] }, 'no arguments: {}')
  t.same(await client.callTool({ name: 'agents_sum', arguments: { a: 2, b: 3 } }), { content: [{ type: 'text', text: '5' }] })

  t.same(await client.callTool({ name: 'tasks_fails', arguments: {} }), { isError: true, content: [{ type: 'text', text: 'it failed' }] })
  t.same(
    await client.callTool({ name: 'tasks_throws', arguments: {} }),
    { isError: true, content: [{ type: 'text', text: 'handler exploded' }] },
    "a thrown handler's message, the endpoint's rule",
  )

  const invalid = await client.callTool({ name: 'tasks_echo', arguments: { title: '' } })
  t.equal(invalid.isError, true)
  t.equal(textOf(invalid), messages.validationFailed, "the envelope's message first")
  const issues = JSON.parse((invalid.content as Array<{ text: string }>)[1].text)
  t.match(issues, { errors: [{ path: String, message: String }] }, 'then the issues')
  t.ok(issues.errors.some((issue: { path: string }) => issue.path === '/title'))

  const zodInvalid = await client.callTool({ name: 'agents_sum', arguments: { a: 'x' } })
  t.equal(zodInvalid.isError, true)
  t.equal(textOf(zodInvalid), messages.validationFailed)

  await t.rejects(client.callTool({ name: 'nope' }), { code: ErrorCode.InvalidParams, message: /Unknown tool: nope/ }, 'a protocol error (-32602)')
  await t.rejects(client.callTool({ name: 'agents_hidden' }), McpError, 'hidden from REST: not callable')
  await t.rejects(client.callTool({ name: 'agents_humansOnly' }), McpError, 'visibility.mcp false: not callable')
  await t.rejects(client.callTool({ name: 'agents_upload' }), McpError, 'an upload action is not a tool')
  t.same(await client.callTool({ name: 'tasks_echo', arguments: { title: 'still', count: 0 } }), { content: [{ type: 'text', text: '{"title":"still","count":0}' }] })
})

t.test('the same pipeline: hooks, per-action timeouts, global handlers', async (t) => {
  const seen: string[] = []
  const server = await startMcpServer(t, {
    services,
    onBeforeActionHandler: ({ action }) => {
      seen.push(action.name)
      return action.name === 'fails' ? Err('refused by the global handler') : Ok(null)
    },
  })
  const client = await connectClient(t, server.url)
  t.same(await client.callTool({ name: 'agents_shout', arguments: { title: 'hi' } }), { content: [{ type: 'text', text: '{"said":"HI","stamped":true}' }] }, 'before hook changed the input, after hook the output')
  t.same(await client.callTool({ name: 'tasks_fails' }), { isError: true, content: [{ type: 'text', text: 'refused by the global handler' }] })
  t.same(seen, ['shout', 'fails'])

  const started = Date.now()
  const timedOut = await client.callTool({ name: 'agents_slow' })
  t.same(timedOut, { isError: true, content: [{ type: 'text', text: messages.actionTimedOut('agents.slow', 50) }] })
  t.ok(Date.now() - started < 2000, 'answered at the action timeout')
})

t.test('protected actions read the MCP request\'s own Authorization header', async (t) => {
  const server = await startMcpServer(t, { services, auth: { secret: SECRET } })
  const anonymous = await connectClient(t, server.url)
  t.same(await anonymous.callTool({ name: 'agents_whoami' }), { isError: true, content: [{ type: 'text', text: messages.authFailed(messages.authReasons.missingToken) }] })
  t.same(await anonymous.callTool({ name: 'tasks_list' }), { content: [{ type: 'text', text: '[1,2,3]' }] }, 'open actions need no token')

  const bad = await connectClient(t, server.url, { requestInit: { headers: { authorization: 'Bearer not.a.token' } } })
  t.same(await bad.callTool({ name: 'agents_whoami' }), { isError: true, content: [{ type: 'text', text: messages.authFailed(messages.authReasons.malformed) }] })

  const token = server.app.jwt.sign({ sub: 'agent-7' })
  const signed = await connectClient(t, server.url, { requestInit: { headers: { authorization: `Bearer ${token}` } } })
  t.same(await signed.callTool({ name: 'agents_whoami' }), { content: [{ type: 'text', text: '{"userId":"agent-7"}' }] })
})

t.test('requireAuth: no valid token, no MCP at all (a 401 envelope before the SDK runs)', async (t) => {
  const server = await startMcpServer(t, { services, auth: { secret: SECRET }, rest: { mcp: { requireAuth: true } } })
  const refused = await rawPost(server.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))
  t.equal(refused.status, 401)
  t.same(refused.json, { status: false, message: messages.authFailed(messages.authReasons.missingToken), data: {} })
  await t.rejects(connectClient(t, server.url), { code: 401 }, 'the SDK client cannot connect: an HTTP error')
  const huge = await rawPost(server.url, JSON.stringify({ junk: 'x'.repeat(2 * 1024 * 1024) }))
  t.equal(huge.status, 401, 'refused before the body is read (not a 413)')
  t.equal((await fetch(server.url, { headers: { accept: 'text/event-stream' } })).status, 401, 'GET too')
  const expired = server.app.jwt.sign({ sub: 'agent-7', exp: Math.floor(Date.now() / 1000) - 60 })
  await t.rejects(connectClient(t, server.url, { requestInit: { headers: { authorization: `Bearer ${expired}` } } }), { code: 401 })

  const token = server.app.jwt.sign({ sub: 'agent-7' })
  const client = await connectClient(t, server.url, { requestInit: { headers: { authorization: `Bearer ${token}` } } })
  t.same(await client.callTool({ name: 'agents_whoami' }), { content: [{ type: 'text', text: '{"userId":"agent-7"}' }] })

  await t.rejects(
    startMcpServer(t, { services, rest: { mcp: { requireAuth: true } } }),
    { message: messages.mcpRequireAuthWithoutAuth },
    'refused at boot without config.auth',
  )
})

t.test('rate limiting: the same limiter, keyed the same way; a 429 is an HTTP error, not a tool result', async (t) => {
  const server = await startMcpServer(t, { services, rest: { rateLimiting: { limitingHeader: 'x-client-id', limit: 6, windowMs: 60_000 } } })
  const client = await connectClient(t, server.url, { requestInit: { headers: { 'x-client-id': 'agent-a' } } })
  let calls = 0
  let thrown: unknown
  try {
    for (; calls < 10; calls++) await client.callTool({ name: 'tasks_list' })
  } catch (error) {
    thrown = error
  }
  t.type(thrown, StreamableHTTPError)
  t.equal((thrown as StreamableHTTPError).code, 429)
  t.match((thrown as Error).message, /Rate limit exceeded/)
  t.ok(calls >= 1 && calls < 6, `some calls passed first (${calls})`)
  const other = await connectClient(t, server.url, { requestInit: { headers: { 'x-client-id': 'agent-b' } } })
  t.same(await other.callTool({ name: 'tasks_list' }), { content: [{ type: 'text', text: '[1,2,3]' }] }, 'another key is not limited')

  const raw = await rawPost(server.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), { 'x-client-id': 'agent-c' })
  t.equal(raw.status, 200)
  t.equal(raw.headers.get('ratelimit-limit'), '6', 'rate-limit headers survive reply.hijack()')
})

t.test('CORS headers survive reply.hijack()', async (t) => {
  const server = await startMcpServer(t, { services, rest: { allowedOrigins: ['http://agent.test'] } })
  const raw = await rawPost(server.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), { origin: 'http://agent.test' })
  t.equal(raw.status, 200)
  t.equal(raw.headers.get('access-control-allow-origin'), 'http://agent.test')
  t.equal(raw.json.result.tools.length, 10)
})

t.test('stateless: two instances, a client alternating between them with no affinity', async (t) => {
  const first = await startMcpServer(t, { services })
  const second = await startMcpServer(t, { services })
  const hits = new Map<number, number>()
  const alternate = { next: 0 }
  const ports = [first.port, second.port]
  const roundRobin: typeof fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input))
    url.port = String(ports[alternate.next++ % 2])
    hits.set(Number(url.port), (hits.get(Number(url.port)) ?? 0) + 1)
    return fetch(url, init)
  }
  const client = await connectClient(t, first.url, { fetch: roundRobin })
  t.equal((await client.listTools()).tools.length, 10)
  for (let i = 0; i < 6; i++) {
    t.same(await client.callTool({ name: 'tasks_echo', arguments: { title: `n${i}`, count: i } }), { content: [{ type: 'text', text: `{"title":"n${i}","count":${i}}` }] })
  }
  t.ok((hits.get(first.port) ?? 0) >= 4 && (hits.get(second.port) ?? 0) >= 4, `both instances answered (${[...hits.values()].join(' / ')})`)
})

t.test('off unless enabled: no route (the plugin module is imported only when enabled)', async (t) => {
  const server = await startMcpServer(t, { services, rest: { mcp: { enabled: false } } })
  const raw = await rawPost(server.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))
  t.equal(raw.status, 404)
  t.equal(raw.json.status, false)
})

t.test('path option', async (t) => {
  const server = await startMcpServer(t, { services, rest: { mcp: { path: 'agents/mcp/' } } })
  const client = await connectClient(t, new URL(`http://127.0.0.1:${server.port}/agents/mcp`))
  t.equal((await client.listTools()).tools.length, 10)
})
