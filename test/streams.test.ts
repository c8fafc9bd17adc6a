import t from 'tap'
import { once } from 'node:events'
import Type from 'typebox'
import { createAction, createService, Err, Ok, messages } from '../lib/index.js'
import { buildServer } from './helpers/server.js'
import { openStream } from './helpers/sse.js'

const finallyRuns: string[] = []
const tick = (ms = 5) => new Promise((resolve) => setTimeout(resolve, ms))

const count = createAction({
  name: 'count',
  description: 'Yields n numbers, returns their sum',
  validation: Type.Object({ n: Type.Integer({ minimum: 0 }) }),
  output: Type.Object({ i: Type.Integer() }),
  handler: async function* (data) {
    let sum = 0
    for (let i = 0; i < data.n; i++) {
      sum += i
      yield { i, secret: 'dropped' } as { i: number }
    }
    return { sum }
  },
})

const endless = createAction({
  name: 'endless',
  description: 'Ticks until closed',
  handler: async function* (_data, context) {
    try {
      for (let i = 0; ; i++) {
        yield i
        await tick(20)
        if (context.signal.aborted) return
      }
    } finally {
      finallyRuns.push('endless')
    }
  },
})

const fails = createAction({
  name: 'fails',
  description: 'Throws after one event',
  handler: async function* () {
    yield 'one'
    throw new Error('went wrong')
  },
})

const refuses = createAction({
  name: 'refuses',
  description: 'Returns Err after one event',
  handler: async function* () {
    yield 1
    return Err('no more')
  },
})

export const streams = createService({ name: 'streams', description: 'streaming actions', actions: [count, endless, fails, refuses] })

t.test('events arrive in order with ids, then the done event with the final envelope', async (t) => {
  const server = await buildServer({ services: [streams], rest: { openapi: { enabled: true, reference: false } } })
  t.teardown(() => server.rest!.app.close())
  await server.rest!.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (server.rest!.app.server.address() as { port: number }).port
  const stream = await openStream(port, '/api/services/streams/count', { n: 3 })
  await stream.ended
  t.equal(stream.status, 200)
  t.equal(stream.headers['content-type'], 'text/event-stream; charset=utf-8')
  t.equal(stream.headers['cache-control'], 'no-cache')
  t.equal(stream.headers['x-accel-buffering'], 'no')
  t.same(stream.events.map((e) => [e.id, e.event, e.data]), [
    ['0', 'message', '{"i":0}'],
    ['1', 'message', '{"i":1}'],
    ['2', 'message', '{"i":2}'],
    [undefined, 'done', JSON.stringify({ status: true, message: messages.executed('streams', 'count'), data: { sum: 3 } })],
  ])
})
