import t from 'tap'
import Fastify from 'fastify'
import type { Socket } from 'node:net'
import Type from 'typebox'
import { createAction, createService, createServices, withEventId } from '../../lib/index.js'
import { clientErrorCodes, clientMessages, createClient, StreamError, type EventStream } from '../../lib/client/index.js'
import { buildServer } from '../helpers/server.js'
import type { TapTest } from '../helpers/postgres.js'
import { listen } from './fixtures.js'

/*
 * The typed client resumes a `resumable` stream after a dropped connection, and never sends any other
 * stream again. The server is real (createServer over a socket) and the drop is real: the server's
 * side of the connection is destroyed once the client holds N events.
 */

interface Ledger {
  runs: Record<string, number>
  lastEventIds: Array<string | undefined>
}

/** Never settles until the request's signal aborts (the drop): the stream is cut in the middle. */
const untilAborted = (signal: AbortSignal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))

function feedServices(ledger: Ledger) {
  const count = (name: string) => (ledger.runs[name] = (ledger.runs[name] ?? 0) + 1)
  // Rows 1..to from the client's place; the first run stops after row 3 and waits (the drop comes then).
  const tail = createAction({
    name: 'tail',
    description: 'Rows after the last one the client received',
    resumable: true,
    validation: Type.Object({ to: Type.Integer() }),
    handler: async function* (data, context) {
      const run = count('tail')
      ledger.lastEventIds.push(context.lastEventId)
      const after = Number.parseInt(context.lastEventId ?? '0', 10) || 0
      for (let id = after + 1; id <= data.to; id++) {
        yield withEventId(id, { id })
        if (run === 1 && id === 3) await untilAborted(context.signal)
      }
      return { last: data.to }
    },
  })
  const once = createAction({
    name: 'once',
    description: 'Not resumable: must never run twice',
    handler: async function* (_data, context) {
      count('once')
      for (let id = 1; id <= 3; id++) yield { id }
      await untilAborted(context.signal)
      yield { id: 4 }
    },
  })
  return createServices([createService({ name: 'feeds', description: 'Feeds', actions: [tail, once] })])
}

async function startServer(t: TapTest) {
  const ledger: Ledger = { runs: {}, lastEventIds: [] }
  const services = feedServices(ledger)
  const server = await buildServer({ services })
  const sockets = new Set<Socket>()
  const requests: string[] = []
  server.app.server.on('connection', (socket: Socket) => sockets.add(socket))
  server.app.addHook('onRequest', async (request) => {
    requests.push(String(request.headers['last-event-id'] ?? '-'))
  })
  const baseUrl = await listen(server.app)
  t.teardown(() => server.close())
  /** Cuts every connection from the server's side, as a proxy or a network failure would. */
  const drop = () => {
    for (const socket of sockets) socket.destroy()
    sockets.clear()
  }
  return { ledger, requests, drop, client: createClient<typeof services>({ baseUrl }) }
}

t.test('a resumable stream continues from its last id after a drop: no duplicate, no gap, the handler saw lastEventId', async (t) => {
  const { ledger, requests, drop, client } = await startServer(t)
  const opened = await client.feeds.tail({ to: 6 })
  if (!opened.ok) return t.fail(opened.error.message)
  const ids: number[] = []
  for await (const event of opened.value) {
    ids.push(event.id)
    if (ids.length === 3) drop()
  }
  t.strictSame(ids, [1, 2, 3, 4, 5, 6])
  t.strictSame(await opened.value.final, { ok: true, value: { last: 6 } })
  t.equal(opened.value.lastEventId, '6')
  t.equal(ledger.runs.tail, 2, 'a second run, resumed')
  t.strictSame(ledger.lastEventIds, [undefined, '3'], 'the second run had context.lastEventId')
  t.strictSame(requests, ['-', '3'], 'sent again with Last-Event-ID: 3')
})

t.test('any other stream is never sent again: the drop ends its loop with a StreamError', async (t) => {
  const { ledger, requests, drop, client } = await startServer(t)
  const opened = await client.feeds.once()
  if (!opened.ok) return t.fail(opened.error.message)
  const ids: number[] = []
  let caught: unknown
  try {
    for await (const event of opened.value) {
      ids.push(event.id)
      if (ids.length === 3) drop()
    }
  } catch (error) {
    caught = error
  }
  t.strictSame(ids, [1, 2, 3])
  t.ok(caught instanceof StreamError)
  if (opened.value.isError(caught)) {
    t.equal(caught.code, clientErrorCodes.network)
    t.equal(caught.httpStatus, 200)
  }
  const final = await opened.value.final
  t.equal(final.ok, false)
  t.equal(ledger.runs.once, 1, 'the action ran once')
  t.strictSame(requests, ['-'], 'one request')
})

/** A hand-written SSE server: each request answers what `script` says for its attempt number. */
async function wireServer(t: TapTest, script: (attempt: number, lastEventId: string | undefined, raw: import('node:http').ServerResponse) => void) {
  const app = Fastify()
  const seen: Array<{ at: number; lastEventId: string | undefined }> = []
  app.post('/api/services', async (request, reply) => {
    const lastEventId = request.headers['last-event-id'] as string | undefined
    seen.push({ at: Date.now(), lastEventId })
    reply.hijack()
    script(seen.length, lastEventId, reply.raw)
  })
  const baseUrl = await listen(app)
  const sockets: Socket[] = []
  app.server.on('connection', (socket: Socket) => sockets.push(socket))
  t.teardown(() => {
    for (const socket of sockets) socket.destroy()
    return app.close()
  })
  return { baseUrl, seen }
}

const sse = (raw: import('node:http').ServerResponse) => raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' })
const event = (id: number) => `id: ${id}\nevent: message\ndata: ${JSON.stringify({ id })}\n\n`
const done = `id: end\nevent: done\ndata: ${JSON.stringify({ status: true, message: 'ok', data: { result: 'over' } })}\n\n`

async function collect(stream: EventStream<unknown>): Promise<{ events: unknown[]; error?: StreamError }> {
  const events: unknown[] = []
  try {
    for await (const value of stream) events.push(value)
  } catch (error) {
    return { events, error: error as StreamError }
  }
  return { events }
}

t.test('the wire: retry honoured, attempts bounded, refusals and 204 end it, the marker decides', async (t) => {
  t.test("the server's retry: delay is waited before each reconnection", async (t) => {
    const { baseUrl, seen } = await wireServer(t, (attempt, lastEventId, raw) => {
      sse(raw)
      if (attempt === 1) {
        raw.write(`retry: 300\n: resumable\n\n${event(1)}${event(2)}`)
        return setTimeout(() => raw.destroy(), 30)
      }
      raw.end(`retry: 300\n: resumable\n\n${event(Number(lastEventId) + 1)}${done}`)
    })
    const opened = await createClient({ baseUrl }).invoke('s', 'a')
    if (!opened.ok) return t.fail(opened.error.message)
    const { events, error } = await collect(opened.value as EventStream<unknown>)
    t.equal(error, undefined)
    t.strictSame(events, [{ id: 1 }, { id: 2 }, { id: 3 }])
    t.strictSame(await (opened.value as EventStream<unknown>).final, { ok: true, value: 'over' })
    t.strictSame(seen.map((entry) => entry.lastEventId), [undefined, '2'])
    t.ok(seen[1]!.at - seen[0]!.at >= 300, `reconnected after the 300 ms the server asked for (${seen[1]!.at - seen[0]!.at} ms)`)
  })

  t.test('reconnections are bounded: attempts in a row without an event, then the StreamError', async (t) => {
    const { baseUrl, seen } = await wireServer(t, (attempt, _id, raw) => {
      sse(raw)
      raw.write(`retry: 10\n: resumable\n\n${attempt === 1 ? event(1) : ''}`)
      setTimeout(() => raw.destroy(), 20)
    })
    const opened = await createClient({ baseUrl, resume: { attempts: 3 } }).invoke('s', 'a')
    if (!opened.ok) return t.fail(opened.error.message)
    const { events, error } = await collect(opened.value as EventStream<unknown>)
    t.strictSame(events, [{ id: 1 }])
    t.equal(error?.code, clientErrorCodes.network)
    t.equal(seen.length, 4, 'the first request and 3 reconnections')
    t.strictSame(seen.slice(1).map((entry) => entry.lastEventId), ['1', '1', '1'])
  })

  t.test('resume: false, or a stream without the marker: never sent again', async (t) => {
    const { baseUrl, seen } = await wireServer(t, (attempt, _id, raw) => {
      sse(raw)
      raw.write(`retry: 10\n${attempt === 1 ? ': resumable\n' : ''}\n${event(1)}`)
      setTimeout(() => raw.destroy(), 20)
    })
    let opened = await createClient({ baseUrl, resume: false }).invoke('s', 'a')
    if (!opened.ok) return t.fail(opened.error.message)
    let outcome = await collect(opened.value as EventStream<unknown>)
    t.equal(outcome.error?.code, clientErrorCodes.network)
    t.equal(outcome.error?.message, clientMessages.unreadable('terminated'))
    t.equal(seen.length, 1, 'resume: false: one request')
    opened = await createClient({ baseUrl }).invoke('s', 'a')
    if (!opened.ok) return t.fail(opened.error.message)
    outcome = await collect(opened.value as EventStream<unknown>)
    t.equal(outcome.error?.code, clientErrorCodes.network)
    t.equal(seen.length, 2, 'no marker (the second request answered without it): one request')
  })

  t.test('a refusal on reconnection ends it with that envelope; a 204 with the drop', async (t) => {
    const { baseUrl, seen } = await wireServer(t, (attempt, _id, raw) => {
      if (attempt === 2) return raw.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ status: false, message: 'Authentication failed: token expired', data: {} }))
      if (attempt === 4) return raw.writeHead(204).end()
      sse(raw)
      raw.write(`retry: 10\n: resumable\n\n${event(1)}`)
      setTimeout(() => raw.destroy(), 20)
    })
    const client = createClient({ baseUrl })
    let opened = await client.invoke('s', 'a')
    if (!opened.ok) return t.fail(opened.error.message)
    let outcome = await collect(opened.value as EventStream<unknown>)
    t.equal(outcome.error?.httpStatus, 401)
    t.equal(outcome.error?.message, 'Authentication failed: token expired')
    opened = await client.invoke('s', 'a')
    if (!opened.ok) return t.fail(opened.error.message)
    outcome = await collect(opened.value as EventStream<unknown>)
    t.equal(outcome.error?.code, clientErrorCodes.network, 'a 204: nothing to resume, the drop is the error')
    t.equal(seen.length, 4)
  })

  t.test('a shutdown (an error event without the end id) resumes; an error with it does not', async (t) => {
    const shutdown = `event: error\ndata: ${JSON.stringify({ status: false, message: 'Server is shutting down', data: {} })}\n\n`
    const failed = `id: end\nevent: error\ndata: ${JSON.stringify({ status: false, message: 'It broke', data: {} })}\n\n`
    const { baseUrl, seen } = await wireServer(t, (attempt, _id, raw) => {
      sse(raw)
      if (attempt === 1) return raw.end(`retry: 10\n: resumable\n\n${event(1)}${shutdown}`)
      raw.end(`retry: 10\n: resumable\n\n${event(2)}${failed}`)
    })
    const opened = await createClient({ baseUrl }).invoke('s', 'a')
    if (!opened.ok) return t.fail(opened.error.message)
    const outcome = await collect(opened.value as EventStream<unknown>)
    t.strictSame(outcome.events, [{ id: 1 }, { id: 2 }])
    t.equal(outcome.error?.message, 'It broke')
    t.strictSame(seen.map((entry) => entry.lastEventId), [undefined, '1'])
  })

  t.test('close() during the wait before a reconnection ends the stream without another request', async (t) => {
    const { baseUrl, seen } = await wireServer(t, (_attempt, _id, raw) => {
      sse(raw)
      raw.write(`retry: 60000\n: resumable\n\n${event(1)}`)
      setTimeout(() => raw.destroy(), 20)
    })
    const opened = await createClient({ baseUrl }).invoke('s', 'a')
    if (!opened.ok) return t.fail(opened.error.message)
    const stream = opened.value as EventStream<unknown>
    const reading = collect(stream)
    while (seen.length === 0 || stream.lastEventId !== '1') await new Promise((resolve) => setTimeout(resolve, 10))
    await new Promise((resolve) => setTimeout(resolve, 100)) // the drop, then the 60 s wait
    stream.close()
    const outcome = await reading
    t.strictSame(outcome.events, [{ id: 1 }])
    t.equal(outcome.error, undefined, 'the loop ends without an error')
    t.equal((await stream.final).ok, false)
    t.equal(seen.length, 1)
  })
})
