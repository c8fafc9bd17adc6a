import t from 'tap'
import type { Socket } from 'node:net'
import Type from 'typebox'
import { createAction, createService, createServices, messages, Ok } from '../../lib/index.js'
import { clientErrorCodes, clientMessages, createClient, isOk, StreamError, type EventStream, type FetchLike } from '../../lib/client/index.js'
import type { TapTest } from '../helpers/postgres.js'
import { buildServer } from '../helpers/server.js'
import { listen } from './fixtures.js'

// The typed client against real streaming actions, over a socket (global fetch) and in-process
// (app.fetch): events as yielded, the final value, refusals as Err, failures as StreamError, and
// (on a socket) leaving the loop or aborting the signal stops the server's generator.

let onFinally: ((why: string) => void) | undefined
const stopped = () => new Promise<string>((resolve) => (onFinally = resolve))

const tick = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })

const count = createAction({
  name: 'count',
  description: 'Yields { n } from 1 to `to`; returns how many',
  validation: Type.Object({ to: Type.Integer({ minimum: 0, maximum: 1000 }) }),
  handler: async function* (data) {
    for (let n = 1; n <= data.to; n++) yield { n, label: `#${n}` }
    return { counted: data.to }
  },
})
const words = createAction({
  name: 'words',
  description: 'Yields strings, returns a number (unwrapped from data.result)',
  handler: async function* () {
    yield 'a'
    yield 'b'
    return 2
  },
})
const breaks = createAction({
  name: 'breaks',
  description: 'Two events, then a throw',
  handler: async function* () {
    yield 1
    yield 2
    throw new Error('the generator broke')
  },
})
const forever = createAction({
  name: 'forever',
  description: 'Yields every few ms until stopped',
  handler: async function* (_data, context) {
    try {
      for (let n = 0; ; n++) {
        yield n
        await tick(5, context.signal)
      }
    } finally {
      onFinally?.(context.signal.aborted ? 'aborted' : 'returned')
    }
  },
})
const plain = createAction({ name: 'plain', description: 'Not a stream', handler: () => Ok({ plain: true }) })

const services = createServices([createService({ name: 'live', description: 'Streams', actions: [count, words, breaks, forever, plain] })])

async function setup(t: TapTest, transport: 'socket' | 'app.fetch') {
  const server = await buildServer({ services, rest: { baseUrl: '/api' } })
  const sockets: Socket[] = []
  t.teardown(async () => {
    for (const socket of sockets) if (socket.bytesRead === 0) socket.destroy() // undici's spare connection (see stream-wire.test.ts)
    await server.close()
  })
  if (transport === 'app.fetch') return { server, client: createClient<typeof services>({ baseUrl: 'http://localhost/api', fetch: server.app.fetch as FetchLike }) }
  const baseUrl = await listen(server.app)
  server.app.server.on('connection', (socket: Socket) => sockets.push(socket))
  return { server, client: createClient<typeof services>({ baseUrl }) }
}

async function drain<E>(stream: EventStream<E, unknown>) {
  const events: E[] = []
  try {
    for await (const event of stream) events.push(event)
    return { events }
  } catch (error) {
    return { events, error }
  }
}

for (const transport of ['socket', 'app.fetch'] as const) {
  t.test(`over ${transport}`, async (t) => {
    const { client } = await setup(t, transport)

    t.test('the events as yielded, then the final value', async (t) => {
      const opened = await client.live.count({ to: 3 })
      if (!isOk(opened)) throw new Error(opened.error.message)
      t.same(await drain(opened.value), { events: [1, 2, 3].map((n) => ({ n, label: `#${n}` })) })
      t.same(await opened.value.final, { ok: true, value: { counted: 3 } })
      t.equal(opened.value.lastEventId, '2', 'ids from 0')

      const many = await client.live.count({ to: 1000 })
      if (!isOk(many)) throw new Error(many.error.message)
      const { events } = await drain(many.value)
      t.equal(events.length, 1000)
      t.ok(events.every((event, index) => event.n === index + 1), 'in order')

      const primitive = await client.live.words()
      if (!isOk(primitive)) throw new Error(primitive.error.message)
      t.same(await drain(primitive.value), { events: ['a', 'b'] })
      t.same(await primitive.value.final, { ok: true, value: 2 }, 'a primitive final value unwrapped')
    })

    t.test('refused before the stream: an Err as for any call', async (t) => {
      const refused = await client.live.count({ to: -1 })
      t.match(refused, { ok: false, error: { status: false, message: 'Validation failed', httpStatus: 400, data: { errors: [{ path: '/to' }] } } })
      const json = await client.live.count({ to: 1 }, { headers: { accept: 'application/json' } })
      t.match(json, { ok: false, error: { httpStatus: 406, message: messages.streamNotAcceptable('live.count') } }, 'an Accept of its own without text/event-stream: 406')
      t.same(await client.live.plain(), { ok: true, value: { plain: true } }, 'a plain action answers JSON as before')
    })

    t.test('a failure after the stream started: the loop throws a StreamError with the message', async (t) => {
      const opened = await client.live.breaks()
      if (!isOk(opened)) throw new Error(opened.error.message)
      const { events, error } = await drain(opened.value)
      t.same(events, [1, 2])
      t.ok(error instanceof StreamError)
      t.ok(opened.value.isError(error), 'isError: the StreamError, typed by the action')
      t.notOk(opened.value.isError(new Error('the generator broke')), 'isError: not any Error')
      t.match(error, { status: false, message: 'the generator broke', httpStatus: 200 })
      t.match(await opened.value.final, { ok: false, error: { message: 'the generator broke' } })
    })
  })
}

t.test('over a socket, leaving the loop stops the generator on the server', async (t) => {
  const { client } = await setup(t, 'socket')
  const opened = await client.live.forever()
  if (!isOk(opened)) throw new Error(opened.error.message)
  const finished = stopped()
  const seen: number[] = []
  for await (const n of opened.value) {
    seen.push(n)
    if (seen.length === 3) break
  }
  t.same(seen, [0, 1, 2])
  t.equal(await finished, 'aborted', "the generator's finally ran, its signal aborted")
  t.match(await opened.value.final, { ok: false, error: { code: clientErrorCodes.aborted, message: clientMessages.streamClosed } })
})

t.test("over a socket, the call's signal stops the stream and the generator", async (t) => {
  const { client } = await setup(t, 'socket')
  const controller = new AbortController()
  const opened = await client.live.forever(undefined, { signal: controller.signal })
  if (!isOk(opened)) throw new Error(opened.error.message)
  const finished = stopped()
  const { events, error } = await drain(
    (async function* () {
      for await (const n of opened.value) {
        yield n
        if (n === 1) controller.abort()
      }
    })() as unknown as EventStream<number>,
  )
  t.same(events, [0, 1])
  t.match(error, { code: clientErrorCodes.aborted, message: clientMessages.aborted })
  t.equal(await finished, 'aborted')
})

t.test('over a socket, close() before reading ends the request', async (t) => {
  const { client } = await setup(t, 'socket')
  const opened = await client.live.forever()
  if (!isOk(opened)) throw new Error(opened.error.message)
  const finished = stopped()
  opened.value.close()
  t.equal(await finished, 'aborted')
  t.match(await opened.value.final, { ok: false, error: { code: clientErrorCodes.aborted } })
})
