import t, { type Test } from 'tap'
import { AsyncLocalStorage } from 'node:async_hooks'
import Type from 'typebox'
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { createAction, createService, createServices, messages, type RestRequestContext } from '../lib/index.js'
import { createClient, isOk } from '../lib/client/index.js'
import { STREAM_HIGH_WATER_MARK } from '../plugins/sse.js'
import { buildServer } from './helpers/server.js'
import { openStream } from './helpers/sse.js'
import { connectClient, startMcpServer } from './helpers/mcp.js'

// A streaming action's generator resumes, after each `yield`, in its execution's scope: the action's
// hook context, the request it serves, the caller's other async context. The SSE writer enters that
// scope once per batch of events and the other consumers (the typed client's server side is the same
// writer; MCP collects with `for await`) once per pull; every event below is made after a `yield`, so
// an event made outside the scope shows it.

/** A store of the caller's own (a tracer's, say), set around the whole request by an onRequest hook. */
const tracer = new AsyncLocalStorage<string>()

const scoped = createAction({
  name: 'scoped',
  description: 'Yields n events, each saying which scope made it',
  validation: Type.Object({ n: Type.Integer({ minimum: 1 }) }),
  handler: async function* (data, context) {
    for (let i = 0; i < data.n; i++) {
      // Every tenth event waits a tick: resumptions from a timer as well as from the consumer's pull.
      if (i % 10 === 9) await new Promise((resolve) => setImmediate(resolve))
      yield {
        i,
        action: context.hookContext.actionName,
        url: context.get<RestRequestContext>('rest')?.req.url ?? null,
        trace: tracer.getStore() ?? null,
        pad: 'x'.repeat(40),
      }
    }
    return { n: data.n, action: context.hookContext.actionName }
  },
})

const services = createServices([createService({ name: 'scope', description: 'scope checks', actions: [scoped] })])

async function listening(t: Test) {
  const server = await buildServer({ services, rest: { openapi: { enabled: true, reference: false } } })
  // What a tracer does: its store for the rest of the request (enterWith, as OpenTelemetry's hooks do).
  server.rest!.app.addHook('preHandler', (request, _reply, done) => {
    tracer.enterWith(`trace-${String(request.headers['x-trace'])}`)
    done()
  })
  t.teardown(() => server.rest!.app.close())
  await server.rest!.app.listen({ port: 0, host: '127.0.0.1' })
  return (server.rest!.app.server.address() as { port: number }).port
}

const N = 3000

t.test('over SSE, on the per-action route and the one endpoint: every event made in the scope, batch after batch', async (t) => {
  const port = await listening(t)
  for (const [path, body, url] of [
    ['/api/services/scope/scoped', { n: N }, '/api/services/scope/scoped'],
    ['/api/services', { intent: 'execute', service: 'scope', action: 'scoped', payload: { n: N } }, '/api/services'],
  ] as const) {
    const stream = await openStream(port, path, body, { accept: 'text/event-stream', 'x-trace': 'abc' })
    // A reader that stops for a while: the writer's buffer fills, and the pulls resume from a drain.
    stream.response.pause()
    await new Promise((resolve) => setTimeout(resolve, 50))
    stream.response.resume()
    await stream.ended
    t.equal(stream.status, 200)
    t.ok(stream.text().length > 8 * STREAM_HIGH_WATER_MARK, 'many batches of events')
    const events = stream.events.filter((event) => event.event === 'message').map((event) => JSON.parse(event.data))
    t.equal(events.length, N)
    const wrong = events.filter((event, i) => event.i !== i || event.action !== 'scope.scoped' || event.url !== url || event.trace !== 'trace-abc')
    t.same(wrong.slice(0, 3), [], `${path}: every event in the execution's scope`)
    const done = stream.events.at(-1)!
    t.equal(done.event, 'done')
    t.same(JSON.parse(done.data).data, { n: N, action: 'scope.scoped' }, 'the final value too')
  }
})

t.test('the typed client reads the same events', async (t) => {
  const port = await listening(t)
  const client = createClient<typeof services>({ baseUrl: `http://127.0.0.1:${port}/api`, headers: { 'x-trace': 'client' } })
  const opened = await client.scope.scoped({ n: 500 })
  if (!isOk(opened)) throw new Error(opened.error.message)
  let count = 0
  let wrong = 0
  for await (const event of opened.value) {
    if (event.i !== count || event.action !== 'scope.scoped' || event.url !== '/api/services' || event.trace !== 'trace-client') wrong++
    count++
  }
  t.equal(count, 500)
  t.equal(wrong, 0, 'every event in the execution scope')
})

t.test('as an MCP tool (collected with for await from the MCP route): every event in the scope', async (t) => {
  const server = await startMcpServer(t, { services })
  const client = await connectClient(t, server.url)
  const result = CallToolResultSchema.parse(await client.callTool({ name: 'scope_scoped', arguments: { n: 50 } }))
  const { events, final } = result.structuredContent as { events: Array<{ i: number; action: string; url: string | null }>; final: unknown }
  t.equal(events.length, 50)
  t.same(events.filter((event, i) => event.i !== i || event.action !== 'scope.scoped' || event.url !== '/api/mcp'), [])
  t.same(final, { n: 50, action: 'scope.scoped' })
})

// The SSE writer gathers the events of one turn of the event loop into one write, and flushes them
// once the turn is over: fewer writes, and no event waits for the next one.

let release: (() => void) | undefined
const burst = createAction({
  name: 'burst',
  description: 'Yields n events without waiting, then one more once released',
  validation: Type.Object({ n: Type.Integer({ minimum: 1 }) }),
  handler: async function* (data) {
    for (let i = 0; i < data.n; i++) yield i
    // Released by the test only once it has read the events above: they must not wait for this one.
    await new Promise<void>((resolve) => (release = resolve))
    yield 'last'
  },
})

t.test('events of one turn go out together, and none waits for the next', async (t) => {
  const server = await buildServer({ services: [createService({ name: 'scope', description: 'scope checks', actions: [burst] })], rest: { openapi: { enabled: true, reference: false } } })
  t.teardown(() => server.rest!.app.close())
  let writes = 0
  server.rest!.app.addHook('onRequest', (_request, reply, done) => {
    const write = reply.raw.write
    reply.raw.write = function (this: typeof reply.raw, ...args: Parameters<typeof write>) {
      writes++
      return write.apply(this, args)
    } as typeof write
    done()
  })
  await server.rest!.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (server.rest!.app.server.address() as { port: number }).port
  const stream = await openStream(port, '/api/services/scope/burst', { n: 1000 })
  const first = await stream.until((events) => events.length >= 1000)
  t.equal(first.length, 1000, 'the 1,000 events arrive while the generator waits')
  t.ok(writes <= 10, `1,000 events (${stream.text().length} characters) in ${writes} writes`)
  release!()
  await stream.ended
  t.same(stream.events.slice(-2).map((event) => [event.event, event.data]), [
    ['message', '"last"'],
    ['done', JSON.stringify({ status: true, message: messages.executed('scope', 'burst'), data: {} })],
  ])
})
