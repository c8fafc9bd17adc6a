import t from 'tap'
import Fastify from 'fastify'
import type { Socket } from 'node:net'
import { clientErrorCodes, clientMessages, createClient, isOk, StreamError, type EventStream } from '../../lib/client/index.js'
import type { TapTest } from '../helpers/postgres.js'
import { listen } from './fixtures.js'

// The client's stream reader against answers written by hand, including what a fastify-actions server
// never sends (events that are not JSON, a stream cut short): each ends the loop with a coded StreamError.

const done = (data: unknown) => `event: done\ndata: ${JSON.stringify({ status: true, message: 'Action executed successfully', data })}\n\n`
const event = (id: number, value: unknown) => `id: ${id}\nevent: message\ndata: ${JSON.stringify(value)}\n\n`

async function wireServer(t: TapTest) {
  const app = Fastify()
  let closed!: () => void
  const disconnected = new Promise<void>((resolve) => (closed = resolve))
  app.post('/api/services', async (request, reply) => {
    const { action, payload } = request.body as { action: string; payload: Record<string, unknown> }
    if (action === 'refuse') return reply.code(400).send({ status: false, message: 'Validation failed', data: { errors: [] } })
    reply.hijack()
    const raw = reply.raw
    raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' })
    const write = (text: string) => raw.write(text)
    switch (action) {
      case 'count': {
        write(': keep-alive\n\n')
        const n = Number(payload.n)
        for (let i = 0; i < n; i++) write(event(i, { i }))
        return raw.end(done({ result: n }))
      }
      case 'nothing':
        return raw.end(done({}))
      case 'fail':
        write(event(0, 'first'))
        return raw.end(`event: error\ndata: ${JSON.stringify({ status: false, message: 'It broke', data: { step: 2 }, code: 'FA_ERR_TEST' })}\n\n`)
      case 'cut':
        write(event(0, 'first'))
        return setTimeout(() => raw.destroy(), 20)
      case 'eof':
        write(event(0, 'first'))
        return raw.end()
      case 'notjson':
        return raw.end('event: message\ndata: {oops\n\n')
      case 'notenvelope':
        return raw.end('event: done\ndata: {"ok":true}\n\n')
      case 'unknown':
        return raw.end(`event: progress\ndata: 1\n\n${event(0, 'kept')}${done({ result: 'x' })}`)
      case 'forever': {
        let i = 0
        const timer = setInterval(() => write(event(i, i++)), 5)
        raw.on('close', () => {
          clearInterval(timer)
          raw.destroy() // the client's FIN leaves the socket half-open while the response is unfinished
          closed()
        })
        return
      }
    }
  })
  const baseUrl = await listen(app)
  const sockets: Socket[] = []
  app.server.on('connection', (socket: Socket) => sockets.push(socket))
  t.teardown(() => {
    // After an aborted fetch undici opens a spare connection that never sends a byte; on Node 20,
    // close() waits for it (Node 24 closes it as idle). See test/client/client.test.ts.
    for (const socket of sockets) if (socket.bytesRead === 0) socket.destroy()
    return app.close()
  })
  return { baseUrl, disconnected }
}

async function collect<E>(stream: EventStream<E>): Promise<{ events: E[]; error?: unknown }> {
  const events: E[] = []
  try {
    for await (const value of stream) events.push(value)
    return { events }
  } catch (error) {
    return { events, error }
  }
}

async function open(client: ReturnType<typeof createClient>, action: string, payload: Record<string, unknown> = {}, signal?: AbortSignal) {
  const result = await client.invoke<EventStream<unknown>>('wire', action, payload, signal ? { signal } : undefined)
  if (!isOk(result)) throw new Error(`expected a stream, got ${JSON.stringify(result.error)}`)
  return result.value
}

t.test('events in order, the final value, the accept header', async (t) => {
  const { baseUrl } = await wireServer(t)
  const client = createClient({ baseUrl })
  const stream = await open(client, 'count', { n: 3 })
  t.same(await collect(stream), { events: [{ i: 0 }, { i: 1 }, { i: 2 }] })
  t.same(await stream.final, { ok: true, value: 3 }, 'the final value unwrapped like a call value')
  t.equal(stream.lastEventId, '2')
  t.same(await collect(stream), { events: [] }, 'a second loop: the stream is over')

  const empty = await open(client, 'nothing')
  t.same(await collect(empty), { events: [] })
  t.same(await empty.final, { ok: true, value: {} })

  const unknown = await open(client, 'unknown')
  t.same(await collect(unknown), { events: ['kept'] }, 'an event kind the client does not know is skipped')
  t.same(await unknown.final, { ok: true, value: 'x' })

  t.same(await client.invoke('wire', 'refuse'), { ok: false, error: { status: false, message: 'Validation failed', data: { errors: [] }, httpStatus: 400 } }, 'a JSON refusal is an Err as before')
})

t.test('an error event ends the loop with a StreamError that carries message, code and data', async (t) => {
  const { baseUrl } = await wireServer(t)
  const stream = await open(createClient({ baseUrl }), 'fail')
  const { events, error } = await collect(stream)
  t.same(events, ['first'])
  t.ok(error instanceof StreamError)
  t.match(error, { name: 'StreamError', status: false, message: 'It broke', code: 'FA_ERR_TEST', data: { step: 2 }, httpStatus: 200 })
  const final = await stream.final
  t.notOk(final.ok)
  t.equal(!final.ok && final.error, error, 'final carries the same error')
})

t.test('what a server of ours never sends: coded errors', async (t) => {
  const { baseUrl } = await wireServer(t)
  const client = createClient({ baseUrl })
  const cases = [
    ['cut', clientErrorCodes.network, /^The answer could not be read: /, ['first']],
    ['eof', clientErrorCodes.network, clientMessages.streamCut, ['first']],
    ['notjson', clientErrorCodes.badResponse, clientMessages.eventNotJson, []],
    ['notenvelope', clientErrorCodes.badResponse, clientMessages.eventNotEnvelope, []],
  ] as const
  for (const [action, code, message, expected] of cases) {
    const stream = await open(client, action)
    const { events, error } = await collect(stream)
    t.same(events, expected, action)
    t.ok(error instanceof StreamError, `${action}: a StreamError`)
    t.match(error, { code, message }, action)
    t.match(await stream.final, { ok: false, error: { code } })
  }
})

t.test('leaving the loop ends the request: the server sees the disconnect', async (t) => {
  const { baseUrl, disconnected } = await wireServer(t)
  const stream = await open(createClient({ baseUrl }), 'forever')
  const seen: unknown[] = []
  for await (const value of stream) {
    seen.push(value)
    if (seen.length === 3) break
  }
  t.same(seen, [0, 1, 2])
  await disconnected
  t.match(await stream.final, { ok: false, error: { code: clientErrorCodes.aborted, message: clientMessages.streamClosed } })
})

t.test('close() from outside the loop ends it without an error', async (t) => {
  const { baseUrl, disconnected } = await wireServer(t)
  const stream = await open(createClient({ baseUrl }), 'forever')
  const seen: unknown[] = []
  const loop = collect(stream)
  for await (const value of stream) {
    seen.push(value)
    break
  }
  void loop
  stream.close()
  stream.close()
  await disconnected
  t.match(await stream.final, { ok: false, error: { code: clientErrorCodes.aborted } })
})

t.test('close() before reading: the request ends, final settles', async (t) => {
  const { baseUrl, disconnected } = await wireServer(t)
  const stream = await open(createClient({ baseUrl }), 'forever')
  stream.close()
  await disconnected
  t.match(await stream.final, { ok: false, error: { code: clientErrorCodes.aborted, message: clientMessages.streamClosed } })
  t.same(await collect(stream), { events: [] })
})

t.test("the call's signal aborts a running stream: the loop throws FA_CLIENT_ABORTED", async (t) => {
  const { baseUrl, disconnected } = await wireServer(t)
  const controller = new AbortController()
  const stream = await open(createClient({ baseUrl }), 'forever', {}, controller.signal)
  const seen: unknown[] = []
  let error: unknown
  try {
    for await (const value of stream) {
      seen.push(value)
      if (seen.length === 2) controller.abort(new Error('enough'))
    }
  } catch (caught) {
    error = caught
  }
  t.same(seen, [0, 1])
  t.ok(error instanceof StreamError)
  t.match(error, { code: clientErrorCodes.aborted, message: clientMessages.aborted })
  await disconnected
})

t.test("the client's signal, fired while nobody reads: final settles, the request ends", async (t) => {
  const { baseUrl, disconnected } = await wireServer(t)
  const controller = new AbortController()
  const client = createClient({ baseUrl, signal: controller.signal })
  const stream = await open(client, 'forever')
  controller.abort()
  await disconnected
  t.match(await stream.final, { ok: false, error: { code: clientErrorCodes.aborted, message: clientMessages.aborted } })
})
