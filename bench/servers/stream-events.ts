/**
 * The `stream-events` workload's two servers (bench/stream-events.ts), chosen by STREAM_SERVER:
 * - `fastify-actions`: a streaming action (an async generator) on its per-action route;
 * - `fastify-bare`: one Fastify route writing the same SSE by hand (`Readable.from` of a generator).
 * Each answers `POST /api/services/feed/events` with `{ n }` events `{ i, text }`, then the done event.
 */
import { Readable } from 'node:stream'
import Fastify from 'fastify'
import Type from 'typebox'
import { createAction, createServer } from '../../lib/index.js'
import { announce, executed } from '../shared.js'

const server = process.env.STREAM_SERVER ?? 'fastify-actions'
const TEXT = 'the quick brown fox'

if (server === 'fastify-actions') {
  const events = createAction({
    name: 'events',
    description: 'Yields n events',
    validation: Type.Object({ n: Type.Integer({ minimum: 0 }) }),
    handler: async function* (data) {
      for (let i = 0; i < data.n; i++) yield { i, text: TEXT }
      return { sent: data.n }
    },
  })
  const actions = await createServer({
    serverName: 'bench',
    logServices: false,
    forceNewInstance: true,
    services: [{ name: 'feed', description: 'Events', actions: [events] }],
    rest: { baseUrl: '/api', allowedOrigins: [], openapi: { actionRoutes: true } },
  })
  await actions.rest.app.listen({ port: 0, host: '127.0.0.1' })
  announce((actions.rest.app.server.address() as { port: number }).port)
} else {
  const app = Fastify({ logger: false })
  app.post('/api/services/feed/events', (request, reply) => {
    const n = (request.body as { n: number }).n
    async function* frames() {
      for (let i = 0; i < n; i++) yield `id: ${i}\nevent: message\ndata: ${JSON.stringify({ i, text: TEXT })}\n\n`
      yield `event: done\ndata: ${JSON.stringify({ status: true, message: executed('feed', 'events'), data: { sent: n } })}\n\n`
    }
    reply.headers({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' })
    return reply.send(Readable.from(frames()))
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  announce((app.server.address() as { port: number }).port)
}
