import t from 'tap'
import { Agent, request } from 'node:http'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { createAction, Ok, type RestRequestContext } from '../lib/index.js'
import { buildServer } from './helpers/server.js'

// A full collection on demand, without starting the test process with --expose-gc.
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

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
  const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, agent, method: 'POST', path: '/api/services', headers: { 'content-type': 'application/json' } }, (incoming) => {
      let text = ''
      incoming.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
      incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, text }))
    })
    outgoing.on('error', reject)
    outgoing.end(payload)
  })
  t.equal(answer.status, 200)
  t.same(JSON.parse(answer.text), { status: true, message: "Action 'mem.keep' executed", data: { size: 200_000 } })

  // The connection is still open (keep-alive); collect a few times across turns of the event loop.
  for (let i = 0; i < 5 && (seen?.deref() !== undefined || body?.deref() !== undefined); i++) {
    await new Promise((resolve) => setImmediate(resolve))
    gc()
  }
  t.equal(agent.freeSockets[Object.keys(agent.freeSockets)[0]]?.length, 1, 'the connection is still open')
  t.equal(seen?.deref(), undefined, 'the request was collected')
  t.equal(body?.deref(), undefined, 'its parsed body was collected')
})

/**
 * The MCP endpoint makes a Server and a stateless transport per call and, once the answer is written,
 * leaves them to the collector instead of closing them (closing builds the SDK's "Connection closed"
 * error, a captured stack per call): nothing of the call may stay reachable on an open connection.
 */
t.test('an answered MCP tool call does not keep its request (nor its arguments) alive on a keep-alive connection', async (t) => {
  let seen: WeakRef<object> | undefined
  let args: WeakRef<object> | undefined
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
  await server.app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => server.close())
  const { port } = server.app.server.address() as { port: number }
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())

  const payload = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'mem_keep', arguments: { blob: 'x'.repeat(200_000) } } })
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }
  const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, agent, method: 'POST', path: '/api/mcp', headers }, (incoming) => {
      let text = ''
      incoming.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
      incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, text }))
    })
    outgoing.on('error', reject)
    outgoing.end(payload)
  })
  t.equal(answer.status, 200)
  t.same(JSON.parse(answer.text), { result: { content: [{ type: 'text', text: '{"size":200000}' }] }, jsonrpc: '2.0', id: 1 })

  for (let i = 0; i < 5 && (seen?.deref() !== undefined || args?.deref() !== undefined); i++) {
    await new Promise((resolve) => setImmediate(resolve))
    gc()
  }
  t.equal(agent.freeSockets[Object.keys(agent.freeSockets)[0]]?.length, 1, 'the connection is still open')
  t.equal(seen?.deref(), undefined, 'the request was collected')
  t.equal(args?.deref(), undefined, 'the tool arguments were collected')
})
