import t from 'tap'
import { once } from 'node:events'
import { Redis } from 'ioredis'
import { createAction, Ok, messages, type LogEntry, type Service, type ServiceLogger } from '../lib/index.js'
import { buildServer } from './helpers/server.js'
import { redisSkipReason, startRedis, type RedisInstance } from './helpers/redis.js'

/** A subtest's `t`. */
type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const skip = redisSkipReason()
const WAIT_MS = 20_000

const ping = createAction({ name: 'ping', description: 'Answers pong', handler: () => Ok({ pong: true }) })
const service: Service = { name: 'svc', description: 'Ping', actions: [ping] }
const pong = { status: true, message: messages.executed('svc', 'ping'), data: { pong: true } }
const body = JSON.stringify({ intent: 'execute', service: 'svc', action: 'ping', payload: {} })

/** The client settings docs/rate-limiting.md recommends: fail fast instead of queueing while Redis is away. */
async function connect(t: Tap, redis: RedisInstance): Promise<Redis> {
  const client = new Redis({ host: '127.0.0.1', port: redis.port, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 })
  client.on('error', () => {}) // reconnect attempts while Redis is down are expected here
  await client.connect()
  t.teardown(() => client.disconnect())
  return client
}

/** A server listening on its own loopback port, limited through `client`. */
async function listeningServer(t: Tap, client: Redis, logger?: ServiceLogger) {
  const server = await buildServer({
    services: [service],
    diagnostics: logger !== undefined,
    resources: logger ? { logger } : {},
    rest: { rateLimiting: { limitingHeader: 'x-client', limit: 3, windowMs: 60_000, redis: client } },
  })
  t.teardown(() => server.close())
  const address = await server.app.listen({ port: 0, host: '127.0.0.1' })
  return (client: string) => fetch(`${address}/api/services`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-client': client }, body })
}

t.test('two servers on two ports share one limit through Redis', { skip }, async (t) => {
  const redis = await startRedis()
  t.teardown(() => redis.stop())
  const [clientA, clientB] = [await connect(t, redis), await connect(t, redis)]
  const a = await listeningServer(t, clientA)
  const b = await listeningServer(t, clientB)

  const answers = [await a('shared'), await a('shared'), await b('shared')]
  t.same(
    answers.map((r) => r.status),
    [200, 200, 200],
  )
  t.same(
    answers.map((r) => r.headers.get('ratelimit-remaining')),
    ['2', '1', '0'],
    'one counter across both servers',
  )
  for (const answer of answers) t.same(await answer.json(), pong)

  for (const limited of [await a('shared'), await b('shared')]) {
    t.equal(limited.status, 429)
    const retryAfter = Number(limited.headers.get('retry-after'))
    t.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`)
    t.same(await limited.json(), { status: false, message: messages.rateLimited(retryAfter), data: {} })
  }
  t.equal(await clientA.get('fastify-rate-limit-shared'), '5', 'the counter lives in Redis')

  const other = await b('someone-else')
  t.equal(other.status, 200)
  t.equal(other.headers.get('ratelimit-remaining'), '2')
})

t.test('Redis going away: requests are served unlimited, the outage and the recovery are logged', { skip }, async (t) => {
  const redis = await startRedis()
  t.teardown(() => redis.stop())
  const client = await connect(t, redis)
  const lines: Array<{ level: string; message: string }> = []
  const record = (level: string) => (entry: LogEntry) => {
    if (entry.atFunction === 'rateLimit.store') lines.push({ level, message: entry.message })
    return `log-${lines.length}`
  }
  const request = await listeningServer(t, client, { info: record('info'), warn: record('warn'), error: record('error') })

  const before = await request('c')
  t.equal(before.status, 200)
  t.equal(before.headers.get('ratelimit-remaining'), '2')

  await redis.stop()
  // ioredis may report an error before 'close': wait for its status instead of one event.
  for (let waited = 0; client.status === 'ready' && waited < WAIT_MS; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20))
  t.not(client.status, 'ready', 'the client saw Redis go away')
  for (let i = 0; i < 5; i++) {
    const answer = await request('c')
    t.equal(answer.status, 200, `request ${i + 1} while Redis is down is served`)
    t.equal(answer.headers.get('ratelimit-limit'), null)
    t.same(await answer.json(), pong)
  }
  t.equal(lines.length, 1, 'one line per outage')
  t.equal(lines[0].level, 'error')
  t.ok(lines[0].message.startsWith(messages.rateLimitStoreDown('')), lines[0].message)

  const restarted = await startRedis(redis.port)
  t.teardown(() => restarted.stop())
  await once(client, 'ready', { signal: AbortSignal.timeout(WAIT_MS) })
  const after = await request('c')
  t.equal(after.status, 200)
  t.equal(after.headers.get('ratelimit-remaining'), '2', 'a fresh Redis starts a fresh window')
  t.same(lines[1], { level: 'info', message: messages.rateLimitStoreUp })
})
