import t from 'tap'
import { Redis } from 'ioredis'
import { createMemoryIdempotencyStore, createRedisIdempotencyStore, messages, type IdempotencyStore } from '../lib/index.js'
import { buildServer } from './helpers/server.js'
import { redisSkipReason, startRedis, type RedisInstance } from './helpers/redis.js'
import { paymentService, type Ledger } from './helpers/idempotency.js'

/** A subtest's `t`. */
type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const skip = redisSkipReason()
const answer = { status: 200, body: '{"status":true}' }
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The same contract for every store: one acquire of two wins, a lease ends, an answer replays and expires, only the holder completes or frees a key. */
async function contract(t: Tap, store: IdempotencyStore) {
  const [a, b] = await Promise.all([store.acquire('k1', 'f1', 10_000), store.acquire('k1', 'f1', 10_000)])
  t.same([a.state, b.state].sort(), ['acquired', 'running'], 'two at once: one runs')
  const holder = (a.state === 'acquired' ? a : b) as { token: string }
  t.match(await store.acquire('k1', 'f2', 10_000), { state: 'running', fingerprint: 'f1' }, 'the fingerprint of the holder')
  await store.release('k1', 'not-the-token')
  t.equal((await store.acquire('k1', 'f1', 10_000)).state, 'running', 'only the holder frees a key')
  await store.complete('k1', 'not-the-token', 'f1', { status: 500, body: 'x' }, 10_000)
  t.equal((await store.acquire('k1', 'f1', 10_000)).state, 'running', 'only the holder completes it')
  await store.complete('k1', holder.token, 'f1', answer, 150)
  t.same(await store.acquire('k1', 'f1', 10_000), { state: 'done', fingerprint: 'f1', answer })
  await sleep(250)
  t.equal((await store.acquire('k1', 'f1', 10_000)).state, 'acquired', 'the answer expired: the key is free')

  const taken = await store.acquire('k2', 'f', 100)
  t.equal(taken.state, 'acquired')
  await sleep(200)
  t.equal((await store.acquire('k2', 'f', 10_000)).state, 'acquired', 'a lease that ran out frees the key (a server that died)')

  const freed = (await store.acquire('k3', 'f', 10_000)) as { token: string }
  await store.release('k3', freed.token)
  t.equal((await store.acquire('k3', 'f', 10_000)).state, 'acquired', 'released: free again')
}

t.test('the memory store keeps the contract', async (t) => {
  await contract(t, createMemoryIdempotencyStore({ maxKeys: 100 }))
})

t.test('the memory store is bounded: the oldest finished key goes first, a running key never', async (t) => {
  const store = createMemoryIdempotencyStore({ maxKeys: 3 })
  const tokens: Record<string, string> = {}
  for (const key of ['a', 'b', 'c']) {
    const claim = await store.acquire(key, 'f', 10_000)
    if (claim.state === 'acquired') tokens[key] = claim.token
  }
  await store.complete('b', tokens.b, 'f', { status: 200, body: '{}' }, 60_000)
  await store.complete('c', tokens.c, 'f', { status: 200, body: '{}' }, 60_000)
  t.equal((await store.acquire('d', 'f', 10_000)).state, 'acquired', 'd taken: full, so the oldest finished key (b) went')
  t.equal((await store.acquire('a', 'f', 10_000)).state, 'running', 'a, older but still running, is kept (a repeat gets 409, not a second run)')
  t.equal((await store.acquire('c', 'f', 10_000)).state, 'done', 'c is kept')
  t.equal((await store.acquire('b', 'f', 10_000)).state, 'acquired', 'b was dropped: taken again, dropping c, the last finished key')
  t.throws(() => store.acquire('e', 'f', 10_000), /the in-memory store holds 3 requests still running \(rest\.idempotency\.maxKeys\)/, 'full of running requests: refused (the guard answers 503)')
})

t.test('the memory store: an expired running key (its server gave up) makes room', async (t) => {
  let clock = 0
  const store = createMemoryIdempotencyStore({ maxKeys: 1, now: () => clock })
  await store.acquire('a', 'f', 1000)
  clock = 1000
  t.equal((await store.acquire('b', 'f', 1000)).state, 'acquired')
})

async function connect(t: Tap, redis: RedisInstance): Promise<Redis> {
  const client = new Redis({ host: '127.0.0.1', port: redis.port, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 })
  client.on('error', () => {}) // reconnect attempts while Redis is down are expected here
  await client.connect()
  t.teardown(() => client.disconnect())
  return client
}

t.test('the Redis store keeps the contract, across two clients (two instances)', { skip }, async (t) => {
  const redis = await startRedis()
  t.teardown(() => redis.stop())
  const one = createRedisIdempotencyStore(await connect(t, redis))
  const two = createRedisIdempotencyStore(await connect(t, redis))
  await contract(t, one)
  // Two instances at once on one key: SET NX lets exactly one in.
  const claims = await Promise.all([one.acquire('fleet', 'f', 10_000), two.acquire('fleet', 'f', 10_000)])
  t.same(claims.map((claim) => claim.state).sort(), ['acquired', 'running'])
  const raw = await connect(t, redis)
  const keys = await raw.keys('fa:idem:*')
  t.ok(keys.length > 0 && keys.every((key) => /^fa:idem:[\w-]+$/.test(key)), 'keys are the prefix and a hash: no key or principal in clear')
  const ttl = await raw.pttl(keys[0])
  t.ok(ttl > 0, 'every key has a TTL')
})

t.test('Redis behind the server: replays across two servers; an outage is a 503 for a key, never a second run', { skip }, async (t) => {
  const redis = await startRedis()
  t.teardown(() => redis.stop())
  const ledger: Ledger = { runs: {} }
  const servers = await Promise.all(
    [0, 1].map(async () => {
      const server = await buildServer({ services: [paymentService(ledger)], rest: { idempotency: { redis: await connect(t, redis), timeout: 500 } } })
      t.teardown(() => server.close())
      return server.app
    }),
  )
  const send = (index: number, key: string | undefined, action = 'charge') =>
    servers[index].inject({
      method: 'POST',
      url: '/api/services',
      headers: key === undefined ? {} : { 'idempotency-key': key },
      payload: { intent: 'execute', service: 'pay', action, payload: { amount: 1 } },
    })
  const first = await send(0, 'pay-1')
  t.equal(first.statusCode, 200)
  const second = await send(1, 'pay-1')
  t.equal(second.statusCode, 200)
  t.equal(second.headers['idempotent-replayed'], 'true')
  t.equal(second.body, first.body)
  t.equal(ledger.runs.charge, 1)

  await redis.stop()
  const down = await send(1, 'pay-2')
  t.equal(down.statusCode, 503)
  t.same(down.json(), { status: false, message: messages.idempotencyUnavailable, data: {} })
  t.equal((await send(0, 'pay-1')).statusCode, 503, 'not even a replay: the store cannot tell')
  t.equal(ledger.runs.charge, 1, 'nothing ran')
  t.equal((await send(0, undefined, 'note')).statusCode, 200, 'an optional action without a key needs no store')
})
