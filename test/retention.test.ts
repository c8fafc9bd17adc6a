import t, { type Test } from 'tap'
import { Agent, request } from 'node:http'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { createAction, messages, Ok, type RestRequestContext } from '../lib/index.js'
import { buildServer } from './helpers/server.js'

// A full collection on demand, without starting the test process with --expose-gc.
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/**
 * Node formats the `Date` header once a second: the first answer of a second arms a timer (up to a
 * second) that empties the cache, and that timer carries the scope the answer was written in. Waiting
 * past the next second boundary (timers fire in order, so the cache's has fired) makes the answer
 * under test the one that arms it; without the wait the check passes or not with the clock.
 */
function coldDateCache(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 1020 - (Date.now() % 1000)))
}

/** Collects a few times across turns of the event loop while any of `refs` is alive. */
async function collect(...refs: Array<WeakRef<object> | undefined>): Promise<void> {
  for (let i = 0; i < 5 && refs.some((ref) => ref?.deref() !== undefined); i++) {
    await new Promise((resolve) => setImmediate(resolve))
    gc()
  }
}

/** One request on `agent` (keep-alive), its status and text. */
function send(agent: Agent, port: number, method: string, path: string, headers: Record<string, string>, payload?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, agent, method, path, headers }, (incoming) => {
      let text = ''
      incoming.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
      incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, text }))
    })
    outgoing.on('error', reject)
    outgoing.end(payload)
  })
}

const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }

/**
 * An answered request must not outlive its answer on a connection that stays open: async resources
 * made while the answer is written (the write, the keep-alive timer) carry whatever scope they were
 * made in, so the answer is written outside the request scope.
 */
for (const waits of [false, true]) t.test(`a keep-alive connection does not keep its last request (nor its body) alive${waits ? ', after an await in the handler' : ''}`, async (t) => {
  let seen: WeakRef<object> | undefined
  let body: WeakRef<object> | undefined
  const keep = createAction({
    name: 'keep',
    description: 'Notes its request',
    // Synchronous, or answering after a turn of the event loop: the endpoint's two ways to answer.
    handler: (data, context) => {
      const note = () => {
        const rest = context.get<RestRequestContext>('rest')!
        seen = new WeakRef(rest.req)
        body = new WeakRef(rest.req.body as object)
        return Ok({ size: String(data.blob).length })
      }
      return waits ? new Promise<ReturnType<typeof note>>((resolve) => setImmediate(() => resolve(note()))) : note()
    },
  })
  const server = await buildServer({ services: [{ name: 'mem', description: 'Retention', actions: [keep] }] })
  await server.app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => server.close())
  const { port } = server.app.server.address() as { port: number }
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())

  const payload = JSON.stringify({ intent: 'execute', service: 'mem', action: 'keep', payload: { blob: 'x'.repeat(200_000) } })
  await coldDateCache()
  const answer = await send(agent, port, 'POST', '/api/services', { 'content-type': 'application/json' }, payload)
  t.equal(answer.status, 200)
  t.same(JSON.parse(answer.text), { status: true, message: "Action 'mem.keep' executed", data: { size: 200_000 } })

  // The connection is still open (keep-alive).
  await collect(seen, body)
  t.equal(agent.freeSockets[Object.keys(agent.freeSockets)[0]]?.length, 1, 'the connection is still open')
  t.equal(seen?.deref(), undefined, 'the request was collected')
  t.equal(body?.deref(), undefined, 'its parsed body was collected')
})

/**
 * The MCP endpoint makes a Server and a stateless transport per call and, once the answer is written,
 * leaves them to the collector instead of closing them (closing builds the SDK's "Connection closed"
 * error, a captured stack per call): nothing of the call may stay reachable on an open connection.
 * The SDK writes the answer outside the request scope; only the tool call runs in it. With the onRequest
 * hooks a server has (the Host check of a loopback-bound server) and one more, as auth, CORS and rate
 * limits add.
 */
for (const extraHook of [false, true]) t.test(`an answered MCP tool call does not keep its request (nor its arguments) alive on a keep-alive connection${extraHook ? ', with one more onRequest hook' : ''}`, async (t) => {
  let seen: WeakRef<object> | undefined
  let args: WeakRef<object> | undefined
  let hooked = 0
  const keep = createAction({
    name: 'keep',
    description: 'Notes its request',
    handler: (data, context) => {
      seen = new WeakRef(context.get<RestRequestContext>('rest')!.req)
      args = new WeakRef(data as object)
      return Ok({ size: String(data.blob).length })
    },
  })
  const server = await buildServer({ services: [{ name: 'mem', description: 'Retention', actions: [keep] }], rest: { mcp: { enabled: true } } })
  if (extraHook) server.app.addHook('onRequest', (_request, _reply, done) => (hooked++, done()))
  await server.app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => server.close())
  const { port } = server.app.server.address() as { port: number }
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  // The Host check is on (the server listens on a loopback address): its onRequest hook is in the chain.
  const refused = await server.app.inject({ method: 'POST', url: '/api/mcp', headers: { ...mcpHeaders, host: 'attacker.example' }, payload: '{}' })
  t.equal(refused.statusCode, 403, 'the Host check is on')

  const payload = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'mem_keep', arguments: { blob: 'x'.repeat(200_000) } } })
  await coldDateCache()
  const answer = await send(agent, port, 'POST', '/api/mcp', mcpHeaders, payload)
  t.equal(answer.status, 200)
  t.same(JSON.parse(answer.text), { result: { content: [{ type: 'text', text: '{"size":200000}' }] }, jsonrpc: '2.0', id: 1 })
  if (extraHook) t.equal(hooked, 1, 'the extra hook ran (after the Host check, which refused the first request)')

  await collect(seen, args)
  t.equal(agent.freeSockets[Object.keys(agent.freeSockets)[0]]?.length, 1, 'the connection is still open')
  t.equal(seen?.deref(), undefined, 'the request was collected')
  t.equal(args?.deref(), undefined, 'the tool arguments were collected')
})

/**
 * A handler that sends before it returns (a custom route's `reply.send()`, the MCP route's own
 * refusals) has Fastify write the answer while the request scope is open: it is written outside it.
 */
for (const target of [
  { name: 'a custom route that sends synchronously', method: 'GET', path: '/sync', headers: {}, status: 200, body: { ok: true } },
  { name: "the MCP route's own 405", method: 'GET', path: '/api/mcp', headers: mcpHeaders, status: 405, body: { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null } },
]) t.test(`${target.name} does not keep its request alive on a keep-alive connection`, async (t) => {
  let seen: WeakRef<object> | undefined
  const server = await buildServer({ rest: { mcp: { enabled: true } } })
  server.app.addHook('onRequest', (request, _reply, done) => {
    if (request.url === target.path) seen = new WeakRef(request)
    done()
  })
  server.app.get('/sync', (_request, reply) => {
    reply.send({ ok: true })
  })
  await server.app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => server.close())
  const { port } = server.app.server.address() as { port: number }
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())

  await coldDateCache()
  const answer = await send(agent, port, target.method, target.path, target.headers)
  t.equal(answer.status, target.status)
  t.same(JSON.parse(answer.text), target.body)

  await collect(seen)
  t.equal(agent.freeSockets[Object.keys(agent.freeSockets)[0]]?.length, 1, 'the connection is still open')
  t.ok(seen, 'the request was seen')
  t.equal(seen?.deref(), undefined, 'the request was collected')
})

/**
 * A stream, on its route and on the endpoint: its generator runs in the execution's scope, its
 * events and its end are written outside the request scope (the routes of the endpoint have no hook
 * that would move a write out of it: plugins/request-scope.ts, `scopesItsExecution`).
 */
for (const route of ['its route', 'the endpoint']) t.test(`a finished stream on ${route} does not keep its request (nor its body) alive on a keep-alive connection`, async (t) => {
  let seen: WeakRef<object> | undefined
  let body: WeakRef<object> | undefined
  const tick = createAction({
    name: 'tick',
    description: 'Notes its request, yields twice',
    handler: async function* (data, context) {
      const rest = context.get<RestRequestContext>('rest')!
      seen = new WeakRef(rest.req)
      body = new WeakRef(rest.req.body as object)
      yield { size: String((data as { blob: string }).blob).length }
      await new Promise((resolve) => setImmediate(resolve))
      yield 'two'
      return 'end'
    },
  })
  const server = await buildServer({ services: [{ name: 'mem', description: 'Retention', actions: [tick] }], rest: { openapi: { enabled: true, reference: false } } })
  await server.app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => server.close())
  const { port } = server.app.server.address() as { port: number }
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())

  const blob = 'x'.repeat(200_000)
  const [path, payload] = route === 'its route' ? ['/api/services/mem/tick', { blob }] : ['/api/services', { intent: 'execute', service: 'mem', action: 'tick', payload: { blob } }]
  await coldDateCache()
  const answer = await send(agent, port, 'POST', path, { 'content-type': 'application/json', accept: 'text/event-stream' }, JSON.stringify(payload))
  t.equal(answer.status, 200)
  t.equal(answer.text, `retry: 3000\n\nid: 0\nevent: message\ndata: {"size":200000}\n\nid: 1\nevent: message\ndata: "two"\n\nid: end\nevent: done\ndata: ${JSON.stringify({ status: true, message: messages.executed('mem', 'tick'), data: { result: 'end' } })}\n\n`)

  await collect(seen, body)
  t.equal(agent.freeSockets[Object.keys(agent.freeSockets)[0]]?.length, 1, 'the connection is still open')
  t.ok(seen, 'the request was seen')
  t.equal(seen?.deref(), undefined, 'the request was collected')
  t.equal(body?.deref(), undefined, 'its parsed body was collected')
})

/**
 * The endpoint's routes answer by returning (plugins/request-scope.ts, `scopesItsExecution`): no onSend
 * hook on them (Fastify then skips its onSend step on the hot path); any other route of the app keeps
 * the hook that writes a synchronous send outside the scope (the tests above).
 */
t.test("the endpoint's JSON routes carry no onSend hook; other routes keep writeOutsideScope", async (t) => {
  // Without response compression here; with it, see below.
  const server = await buildServer({ rest: { openapi: { enabled: true, reference: false }, compression: false } })
  t.teardown(() => server.close())
  server.app.get('/custom', (_request, reply) => {
    reply.send('x')
  })
  await server.app.ready()
  // printRoutes lists each route with its hooks: `/path (METHOD) {constraints}` then `• (hook) [...]`
  // lines; a path under another is printed from where they part (`/tasks/echo` under `/api/services`).
  const hooksOf = new Map<string, string>()
  let route = ''
  for (const line of server.app.printRoutes({ includeHooks: true, commonPrefix: false }).split('\n')) {
    const named = /(\/\S*) \((\w+)\)( \{.*\})?$/.exec(line)
    if (named) {
      route = `${named[2]} ${named[1]}${named[3] ?? ''}`
      hooksOf.set(route, '')
    } else if (route && line.includes('• (')) hooksOf.set(route, hooksOf.get(route) + line.slice(line.indexOf('• (')))
  }
  for (const path of ['/api/services', '/tasks/echo']) {
    t.ok(hooksOf.has(`POST ${path}`), `POST ${path} is listed`)
    t.notMatch(hooksOf.get(`POST ${path}`), /onSend/, `POST ${path}: no onSend hook`)
  }
  t.match(hooksOf.get('GET /custom'), /\(onSend\) \["writeOutsideScope\(\)"\]/, 'a custom route keeps it')
  t.match(hooksOf.get('GET /api/openapi.json'), /writeOutsideScope/, 'so do the document routes')
})

t.test("with compression on, the endpoint's routes still carry no onSend hook: they compress in their handlers", async (t) => {
  const server = await buildServer({ rest: { openapi: { enabled: true, reference: false } } })
  t.teardown(() => server.close())
  await server.app.ready()
  const routes = server.app.printRoutes({ includeHooks: true, commonPrefix: false })
  // The JSON route's hook lines: from its own line to the next route's (the multipart one, same path).
  const lines = routes.split('\n')
  const start = lines.findIndex((line) => line.endsWith('/api/services (POST)'))
  const end = lines.findIndex((line, i) => i > start && line.includes('(POST)'))
  t.notMatch(lines.slice(start, end).join('\n'), /onSend/, 'no onSend on the hot path (plugins/compression.ts, compressedAnswers)')
  const doc = lines.findIndex((line) => line.endsWith('/api/openapi.json (GET)'))
  const docEnd = lines.findIndex((line, i) => i > doc && /\((GET|POST|HEAD)\)/.test(line))
  t.match(lines.slice(doc, docEnd).join('\n'), /compressGet/, "the document's GET route compresses in an onSend hook")
})

/**
 * The async context an execution leaves behind is the one it found (lib/context.ts, `runInScope`). On
 * Node 24 and 26 `AsyncLocalStorage.run` leaves a copy of it instead, and the answer is written in
 * that copy: the connection's keep-alive timer then holds a new object per request, one per open
 * connection, which every scavenge copies. The timer's context is Node's own field
 * (`kAsyncContextFrame`, Node 24 and later); Node 20 keeps stores on the async resource, and has no
 * such field.
 */
const frameField = (timer: object) => Object.getOwnPropertySymbols(timer).find((symbol) => symbol.description === 'kAsyncContextFrame')
const hasFrames = frameField(setTimeout(() => {}, 0)) !== undefined

/**
 * `server` listening on a loopback port, a keep-alive agent with one connection to it, and a reader of
 * that connection's keep-alive timer (after an answer).
 */
async function keptAlive(t: Test, server: Awaited<ReturnType<typeof buildServer>>) {
  await server.app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => server.close())
  const { port } = server.app.server.address() as { port: number }
  let socket: import('node:net').Socket | undefined
  server.app.server.on('connection', (accepted) => (socket = accepted))
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  const timerOf = () => (socket as unknown as Record<symbol, object | undefined>)[Object.getOwnPropertySymbols(socket!).find((symbol) => symbol.description === 'timeout')!]
  return { port, agent, timerOf }
}
for (const waits of [false, true]) t.test(`answers on a kept-alive connection leave its timer the async context it had${waits ? ', after an await in the handler' : ''}`, { skip: hasFrames ? false : `Node ${process.versions.node} keeps async context on the async resource, not in a frame` }, async (t) => {
  const echo = createAction({
    name: 'echo',
    description: 'Echoes',
    handler: (data) => {
      const answer = Ok(data)
      return waits ? new Promise<typeof answer>((resolve) => setImmediate(() => resolve(answer))) : answer
    },
  })
  const server = await buildServer({ services: [{ name: 'ctx', description: 'Async context', actions: [echo] }] })
  const { port, agent, timerOf } = await keptAlive(t, server)
  /** The async context the connection's keep-alive timer carries after an answer. */
  const timerContext = async (n: number) => {
    const payload = JSON.stringify({ intent: 'execute', service: 'ctx', action: 'echo', payload: { n } })
    const answer = await send(agent, port, 'POST', '/api/services', { 'content-type': 'application/json' }, payload)
    t.same(JSON.parse(answer.text), { status: true, message: "Action 'ctx.echo' executed", data: { n } })
    const timer = timerOf()
    t.ok(timer, 'the connection has its keep-alive timer')
    const field = frameField(timer!)
    t.ok(field, 'the timer has an async context field')
    return (timer as Record<symbol, unknown>)[field!]
  }
  const first = await timerContext(1)
  const second = await timerContext(2)
  t.equal(second, first, 'the same async context after each answer: nothing made for a request')
})

/**
 * What is written outside the request scope (`outsideRequestScope`: a custom route's synchronous
 * `reply.send`, the MCP route's answer) is written in the async context the scope was entered from,
 * not in a copy: `AsyncLocalStorage.exit` made a new frame per answer on Node 24 and 26, which the
 * connection's keep-alive timer then kept.
 */
for (const target of ['a custom route that sends synchronously', 'an MCP tool call']) t.test(`${target} leaves a kept-alive connection's timer the async context it had`, { skip: hasFrames ? false : `Node ${process.versions.node} keeps async context on the async resource, not in a frame` }, async (t) => {
  const echo = createAction({ name: 'echo', description: 'Echoes', handler: (data) => Ok(data) })
  const mcp = target === 'an MCP tool call'
  const server = await buildServer({ services: [{ name: 'ctx', description: 'Async context', actions: [echo] }], ...(mcp ? { rest: { mcp: { enabled: true } } } : {}) })
  server.app.get('/sync', (request, reply) => {
    reply.send({ n: Number((request.query as { n: string }).n) })
  })
  const { port, agent, timerOf } = await keptAlive(t, server)
  const timerContext = async (n: number) => {
    if (mcp) {
      const payload = JSON.stringify({ jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: 'ctx_echo', arguments: { n } } })
      const answer = await send(agent, port, 'POST', '/api/mcp', mcpHeaders, payload)
      t.same(JSON.parse(answer.text), { result: { content: [{ type: 'text', text: `{"n":${n}}` }] }, jsonrpc: '2.0', id: n })
    } else {
      const answer = await send(agent, port, 'GET', `/sync?n=${n}`, {})
      t.same(JSON.parse(answer.text), { n })
    }
    const timer = timerOf()
    t.ok(timer, 'the connection has its keep-alive timer')
    return (timer as Record<symbol, unknown>)[frameField(timer!)!]
  }
  const first = await timerContext(1)
  const second = await timerContext(2)
  t.equal(second, first, 'the same async context after each answer: nothing made for a request')
})
