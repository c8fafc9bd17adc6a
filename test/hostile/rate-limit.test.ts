import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { DEFAULTS, messages } from '../../lib/index.js'
import { buildServer } from '../helpers/server.js'

// Finding 2: with limit 5 per 60 s, a key that got 429 had a fresh budget once 10,000 other keys
// had been seen in the window (the in-memory store is an LRU of 5,000). The store now holds
// `rateLimiting.cacheSize` keys (default 100,000): counts stay exact up to that many keys a window.
// The window is an hour, so no run is slow enough to see it end: every check counts requests, and
// the boundary is proven on a small store (exactly cacheSize keys kept) rather than by 100,000 injects.

const HEADER = 'x-client'

const WINDOW_S = 3600

async function limited(t: Test, cacheSize?: number) {
  const server = await buildServer({ rest: { rateLimiting: { limitingHeader: HEADER, limit: 5, windowMs: WINDOW_S * 1000, cacheSize } } })
  t.teardown(() => server.close())
  return server.app
}

// A 404 is the cheapest request the limiter sees (it runs as a root onRequest hook).
const hit = (app: FastifyInstance, key: string) => app.inject({ method: 'GET', url: '/nothing-here', headers: { [HEADER]: key } })

async function exhaust(t: Test, app: FastifyInstance, key: string) {
  for (let i = 0; i < 5; i++) t.equal((await hit(app, key)).statusCode, 404)
  const refused = await hit(app, key)
  t.equal(refused.statusCode, 429)
  t.equal(refused.json().message, messages.rateLimited(retryIn(refused.json().message)))
}

/** The seconds of a 429's message: within the hour's window (how far into it depends on the machine). */
function retryIn(message: string): number {
  return Number(/^Rate limit exceeded, retry in (\d+) seconds$/.exec(message)?.[1])
}

async function rotate(app: FastifyInstance, keys: number) {
  const batch = 500
  for (let start = 0; start < keys; start += batch) {
    const sends = []
    for (let i = start; i < Math.min(keys, start + batch); i++) sends.push(hit(app, `rotating-${i}`))
    await Promise.all(sends)
  }
}

t.test('the default store remembers 100,000 keys', async (t) => {
  t.equal(DEFAULTS.rateLimiting.cacheSize, 100_000)
})

t.test('with the default store, a refused key stays refused past 10,000 other keys (the finding)', async (t) => {
  const app = await limited(t)
  await exhaust(t, app, 'victim')
  await rotate(app, 10_000)
  const still = await hit(app, 'victim')
  t.equal(still.statusCode, 429, 'the count of the victim key survived')
  const body = still.json()
  t.same(body, { status: false, message: body.message, data: {} })
  const seconds = retryIn(body.message)
  t.equal(body.message, messages.rateLimited(seconds))
  t.ok(seconds > 0 && seconds <= WINDOW_S, 'the same window, not a new one')
})

t.test('the store keeps exactly cacheSize keys: the victim and 1,999 others in 2,000', async (t) => {
  const app = await limited(t, 2000)
  await exhaust(t, app, 'victim')
  await rotate(app, 1999)
  t.equal((await hit(app, 'victim')).statusCode, 429, 'all 2,000 keys kept: still refused')
})

t.test('the mechanism: one key more than cacheSize and the oldest is forgotten (why the default is large)', async (t) => {
  const app = await limited(t, 2000)
  await exhaust(t, app, 'victim')
  await rotate(app, 2000)
  t.equal((await hit(app, 'victim')).statusCode, 404, 'evicted: a fresh budget')
})

t.test('rateLimiting.cacheSize must be a positive integer', async (t) => {
  await t.rejects(buildServer({ rest: { rateLimiting: { limitingHeader: HEADER, cacheSize: 0 } } }), { code: 'FA_ERR_CONFIG', message: /rest\.rateLimiting\.cacheSize/ })
})
