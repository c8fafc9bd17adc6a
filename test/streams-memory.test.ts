/**
 * Streams and memory, over real sockets: a slow reader never makes the server buffer (the generator is
 * pulled only as the socket drains), and idle streams cost little each (the figure is printed).
 */
import t from 'tap'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { createAction, createService } from '../lib/index.js'
import { buildServer } from './helpers/server.js'
import { openStream } from './helpers/sse.js'

const CHUNK = 'x'.repeat(64 * 1024)
const GIB = 1024 * 1024 * 1024
const state = { produced: 0, finished: false }

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
const service = createService({ name: 'mem', description: 'memory', actions: [flood, idle] })

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits until the server stops pulling: the produced count is the same over several checks. */
async function settled(): Promise<number> {
  let last = -1
  let same = 0
  while (same < 5) {
    await pause(40)
    same = state.produced === last ? same + 1 : 0
    last = state.produced
  }
  return last
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
