/**
 * Streams and memory, over real sockets: a slow reader never makes the server buffer (the generator is
 * pulled only as the socket drains), and idle streams cost little each (the figure is printed).
 */
import t from 'tap'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { connect } from 'node:net'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { createAction, createService } from '../lib/index.js'
import { buildServer } from './helpers/server.js'
import { openStream } from './helpers/sse.js'

const CHUNK = 'x'.repeat(64 * 1024)
const GIB = 1024 * 1024 * 1024
const state = { produced: 0, finished: false }
const awaited = { produced: 0, finished: false }
const KIB = 'y'.repeat(1024)

const flood = createAction({
  name: 'flood',
  description: 'Could yield 1 GiB, 64 KiB at a time',
  handler: async function* () {
    try {
      for (let sent = 0; sent < GIB; sent += CHUNK.length) {
        state.produced++
        yield CHUNK
      }
    } finally {
      state.finished = true
    }
  },
})
const idle = createAction({
  name: 'idle',
  description: 'One event, then nothing until the client leaves',
  handler: async function* (_data, context) {
    yield 0
    await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }))
  },
})
const trickle = createAction({
  name: 'trickle',
  description: 'Awaits between its yields (I/O, a timer), 1 KiB events without end',
  handler: async function* () {
    try {
      for (;;) {
        await nextTurn()
        awaited.produced++
        yield KIB
      }
    } finally {
      awaited.finished = true
    }
  },
})
const service = createService({ name: 'mem', description: 'memory', actions: [flood, idle, trickle] })

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits until the server stops pulling: the produced count is the same over several checks (at most `limit` checks). */
async function settled(counter = state, limit = Infinity): Promise<number> {
  let last = -1
  let same = 0
  for (let checks = 0; same < 5 && checks < limit; checks++) {
    await pause(40)
    same = counter.produced === last ? same + 1 : 0
    last = counter.produced
  }
  return same < 5 ? -1 : last
}

t.test('a slow reader of a 1 GiB stream: the generator waits for the socket, RSS stays flat', async (t) => {
  const server = await buildServer({ services: [service], rest: { openapi: { actionRoutes: true } } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (server.app.server.address() as { port: number }).port
  const rssBefore = process.memoryUsage().rss
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path: '/api/services/mem/flood', method: 'POST', agent: false, headers: { accept: 'text/event-stream', 'content-type': 'application/json' } }, resolve)
    request.on('error', reject)
    request.end('{}')
  })
  t.equal(response.statusCode, 200)
  response.pause()
  const firstPlateau = await settled()
  // Read slowly: 4 MiB, a chunk at a time with pauses, then stop again.
  let read = 0
  while (read < 4 * 1024 * 1024) {
    const chunk = response.read() as Buffer | null
    if (chunk === null) {
      await pause(5)
      continue
    }
    read += chunk.length
  }
  const secondPlateau = await settled()
  const rssAfter = process.memoryUsage().rss
  const maxEvents = 1000 // 64 MiB of 1 GiB
  t.ok(firstPlateau < maxEvents, `pulled ${firstPlateau} events (${(firstPlateau * 64) / 1024} MiB) of 16384 while nobody read`)
  t.ok(secondPlateau - firstPlateau < maxEvents, `reading 4 MiB pulled ${secondPlateau - firstPlateau} more events`)
  t.ok(rssAfter - rssBefore < 128 * 1024 * 1024, `RSS grew ${Math.round((rssAfter - rssBefore) / 1024 / 1024)} MiB (bounded, not the 1 GiB the generator could make)`)
  t.comment(`slow reader: ${firstPlateau} events pulled before the first read, ${secondPlateau} after reading 4 MiB; RSS +${Math.round((rssAfter - rssBefore) / 1024 / 1024)} MiB`)
  response.destroy()
  while (!state.finished) await pause(5)
  t.ok(state.finished, "the generator's finally ran when the reader left")
})

t.test('1,000 concurrent idle streams: RSS per stream (client and server in one process)', async (t) => {
  const server = await buildServer({ services: [service], rest: { openapi: { actionRoutes: true } } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1', backlog: 2048 })
  const port = (server.app.server.address() as { port: number }).port
  // Warm up the paths once so their code is not counted.
  const warm = await openStream(port, '/api/services/mem/idle', {})
  await warm.until((events) => events.length >= 1)
  warm.destroy()
  const rssBefore = process.memoryUsage().rss
  const count = 1000
  const opened = []
  for (let batch = 0; batch < count; batch += 100) {
    opened.push(...(await Promise.all(Array.from({ length: 100 }, () => openStream(port, '/api/services/mem/idle', {})))))
  }
  await Promise.all(opened.map((stream) => stream.until((events) => events.length >= 1)))
  const rssAfter = process.memoryUsage().rss
  const perStream = (rssAfter - rssBefore) / count
  t.equal(opened.filter((stream) => stream.status === 200 && stream.events.length === 1).length, count, 'every stream open with its first event')
  t.ok(perStream < 200 * 1024, `${Math.round(perStream / 1024)} KiB of RSS per idle stream, client side included`)
  t.comment(`1,000 idle streams: RSS +${Math.round((rssAfter - rssBefore) / 1024 / 1024)} MiB, ${Math.round(perStream / 1024)} KiB per stream (client sockets and parsers included)`)
  for (const stream of opened) stream.destroy()
})

t.test('a generator that awaits between yields, read by a socket that really pauses: pulled only to the buffer bound, heap flat over 5 s', async (t) => {
  const server = await buildServer({ services: [service], rest: { openapi: { actionRoutes: true }, streams: { maxDuration: 600_000 } } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (server.app.server.address() as { port: number }).port
  const socket = connect(port, '127.0.0.1')
  t.teardown(() => socket.destroy())
  socket.write(`POST /api/services/mem/trickle HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}`)
  const head = await new Promise<string>((resolve) => socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1'))))
  t.match(head, /^HTTP\/1\.1 200 /)
  // The reader stops reading: the kernel's buffers fill (a few MiB on loopback), then the server's.
  socket.pause()
  // 750 checks of 40 ms: a generator pulled without limit (the old loop) never settles.
  const plateau = await settled(awaited, 750)
  t.not(plateau, -1, 'the server stopped pulling')
  global.gc?.()
  const heapBefore = process.memoryUsage().heapUsed
  await pause(5000)
  global.gc?.()
  const heapAfter = process.memoryUsage().heapUsed
  const grown = awaited.produced - plateau
  // The kernel's socket buffers on loopback (tcp_wmem + tcp_rmem maxima) hold at most ~40 MiB here.
  t.ok(plateau < 40 * 1024, `${plateau} events of 1 KiB pulled while nobody read (kernel buffers included)`)
  t.ok(grown <= 1, `${grown} more events pulled over 5 s of a paused reader`)
  t.ok(heapAfter - heapBefore < 8 * 1024 * 1024, `heap ${Math.round((heapAfter - heapBefore) / 1024)} KiB over 5 s`)
  t.comment(`awaiting generator, paused socket: ${plateau} KiB pulled, then +${grown} events and heap ${Math.round((heapAfter - heapBefore) / 1024)} KiB over 5 s`)
  socket.resume()
  socket.destroy()
  while (!awaited.finished) await pause(5)
  t.ok(awaited.finished, "the generator's finally ran when the reader left")
})
