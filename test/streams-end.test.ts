/**
 * Every stream ends, whatever its reader does: a reader that stopped reading (`socket.pause()` on a
 * real socket) does not hold the stream, its buffers or `close()` past `rest.streams.endTimeout`.
 */
import t from 'tap'
import { connect, type Socket } from 'node:net'
import { createAction, createService, getActions, messages } from '../lib/index.js'
import { openStream } from './helpers/sse.js'
import { buildServer } from './helpers/server.js'

const CHUNK = 'x'.repeat(64 * 1024)
const state = { finished: 0 }

const flood = createAction({
  name: 'flood',
  description: 'Yields 64 KiB events until closed',
  handler: async function* () {
    try {
      for (;;) yield CHUNK
    } finally {
      state.finished++
    }
  },
})
const service = createService({ name: 'ends', description: 'streams that must end', actions: [flood] })

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function listen(streams: Record<string, number>) {
  const server = await buildServer({ services: [service], rest: { streams, openapi: { actionRoutes: true } } })
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  return { server, port: (server.app.server.address() as { port: number }).port }
}

/** Opens the flood over a raw socket, waits for the head, then stops reading for good. */
async function pausedReader(port: number): Promise<{ socket: Socket; closed: Promise<void> }> {
  const socket = connect(port, '127.0.0.1')
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  socket.on('error', () => {})
  socket.write('POST /api/services/ends/flood HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}')
  const head = await new Promise<string>((resolve) => socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1'))))
  if (!head.startsWith('HTTP/1.1 200 ')) throw new Error(head)
  socket.pause()
  // Let the kernel's buffers and the stream's own fill up.
  await pause(300)
  return { socket, closed }
}

/** The server's open connections. */
const connections = (server: { app: { server: { getConnections: (cb: (error: Error | null, count: number) => void) => void } } }) =>
  new Promise<number>((resolve) => server.app.server.getConnections((_error, count) => resolve(count)))

/**
 * Resolves with true once `closed` settles, false after `ms` (a cap for a test that would hang). The
 * cap's timer is cleared once `closed` wins: left running, it kept the file alive 30 s past its tests.
 */
async function within(closed: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const cap = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))
  try {
    return await Promise.race([closed.then(() => true), cap])
  } finally {
    clearTimeout(timer)
  }
}

t.test('after maxDuration, a reader that does not take the final event loses its socket after endTimeout', async (t) => {
  const { server, port } = await listen({ maxDuration: 3000, endTimeout: 300 })
  t.teardown(() => server.close())
  const before = state.finished
  const { socket, closed } = await pausedReader(port)
  t.teardown(() => socket.destroy())
  t.equal(await connections(server), 1, 'the paused reader is connected')
  // A paused socket does not read, so it cannot see its end: the server's count of connections does.
  let open = 1
  for (let checks = 0; open > 0 && checks < 300; checks++) {
    await pause(50)
    open = await connections(server)
  }
  t.equal(open, 0, 'the server destroyed the socket of the paused reader')
  socket.resume()
  t.ok(await within(closed, 5000), 'the reader, reading again, finds its connection gone')
  t.equal(state.finished, before + 1, "the generator's finally ran")
})

t.test('close() returns within endTimeout + 1 s while a reader is paused', async (t) => {
  const endTimeout = 1000
  const { server, port } = await listen({ endTimeout })
  const { socket, closed } = await pausedReader(port)
  t.teardown(() => socket.destroy())
  const started = Date.now()
  await server.close()
  const took = Date.now() - started
  t.ok(took < endTimeout + 1000, `close() took ${took} ms with a paused reader (endTimeout ${endTimeout} ms)`)
  socket.resume()
  t.ok(await within(closed, 5000), 'the paused reader lost its socket')
})

t.test('a reader that takes the final event keeps it: the end is written, then the response ends', async (t) => {
  const { server, port } = await listen({ maxDuration: 300, endTimeout: 60_000 })
  t.teardown(() => server.close())
  const socket = connect(port, '127.0.0.1')
  t.teardown(() => socket.destroy())
  socket.write('POST /api/services/ends/flood HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}')
  let tail = ''
  const ended = new Promise<void>((resolve) =>
    socket.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString('latin1')).slice(-4096)
      if (tail.endsWith('0\r\n\r\n')) resolve()
    }),
  )
  t.ok(await within(ended, 30_000), 'the chunked response ended')
  t.match(tail, /event: error\ndata: \{"status":false,"message":"Stream 'ends\.flood' ended after its longest duration of 300ms"/)
  t.notOk(socket.destroyed, 'the connection stays open for the next request')
})

t.test('a stream ends when the token that opened it expires: an error event saying so', async (t) => {
  const ticks = createAction({
    name: 'ticks',
    description: 'A tick every 50 ms for 6 s',
    isProtected: true,
    handler: async function* () {
      for (let i = 0; i < 120; i++) {
        await pause(50)
        yield i
      }
      return { ticks: 120 }
    },
  })
  const server = await buildServer({ services: [createService({ name: 'guarded', description: 'auth', actions: [ticks] })], auth: { secret: 'a-long-random-secret-for-the-stream-expiry-test' }, rest: { openapi: { actionRoutes: true } } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (server.app.server.address() as { port: number }).port
  const token = getActions(server.app).jwt!.sign({ sub: 'ada' }, { expiresIn: 2 })
  const stream = await openStream(port, '/api/services/guarded/ticks', {}, { accept: 'text/event-stream', authorization: `Bearer ${token}` })
  await stream.ended
  t.equal(stream.status, 200)
  const last = stream.events.at(-1)!
  t.same([last.id, last.event, JSON.parse(last.data)], ['end', 'error', { status: false, message: messages.authFailed(messages.authReasons.expired), data: {} }])
  const ticked = stream.events.length - 1
  t.ok(ticked > 0 && ticked < 120, `${ticked} events before the token expired, not all 120`)
})
