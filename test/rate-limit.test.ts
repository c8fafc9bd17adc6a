import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { createAction, Ok, messages, type LogEntry, type RateLimitConfig, type Service, type ServiceLogger } from '../lib/index.js'
import { UNKNOWN_CLIENT } from '../plugins/rate-limit.js'
import { DEFAULTS } from '../lib/index.js'
import { buildServer, execute, type TestConfig } from './helpers/server.js'

/** A subtest's `t`. */
type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

interface Logged extends LogEntry {
  level: 'info' | 'warn' | 'error'
}

function captureLogger(): ServiceLogger & { lines: Logged[] } {
  const lines: Logged[] = []
  const write = (level: Logged['level']) => (entry: LogEntry) => {
    lines.push({ level, ...entry })
    return `log-${lines.length}`
  }
  return { lines, info: write('info'), warn: write('warn'), error: write('error') }
}

/** A service whose one action counts how often its handler ran. */
function countingService() {
  const calls = { count: 0 }
  const ping = createAction({
    name: 'ping',
    description: 'Counts its calls',
    handler: () => {
      calls.count++
      return Ok({ pong: true })
    },
  })
  const service: Service = { name: 'svc', description: 'Counting', actions: [ping] }
  return { calls, service }
}

async function limitedServer(t: Tap, rateLimiting: Partial<RateLimitConfig>, overrides: TestConfig = {}) {
  const counting = countingService()
  const server = await buildServer({
    services: [counting.service],
    ...overrides,
    rest: { rateLimiting: { limitingHeader: 'x-client', ...rateLimiting }, ...(overrides.rest || {}) },
  })
  t.teardown(() => server.close())
  return Object.assign(server, { calls: counting.calls })
}

const ping = (app: FastifyInstance, headers: Record<string, string> = {}) => execute(app, 'svc', 'ping', {}, { headers })
const pong = { status: true, message: messages.executed('svc', 'ping'), data: { pong: true } }

/** The 429 envelope, with `<n>` read from the Retry-After header the same response carries. */
function assertLimited(t: Tap, answer: { statusCode: number; headers: Record<string, unknown>; body: unknown }) {
  t.equal(answer.statusCode, 429)
  const retryAfter = Number(answer.headers['retry-after'])
  t.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `retry-after is a positive integer (${answer.headers['retry-after']})`)
  t.same(answer.body, { status: false, message: messages.rateLimited(retryAfter), data: {} })
}

t.test('without rateLimiting.limitingHeader nothing is limited and no headers are sent', async (t) => {
  for (const rest of [{}, { rateLimiting: { limitingHeader: '', limit: 1 } }]) {
    const counting = countingService()
    const server = await buildServer({ services: [counting.service], rest })
    t.teardown(() => server.close())
    for (let i = 0; i < 3; i++) {
      const answer = await ping(server.app, { 'x-client': 'a' })
      t.equal(answer.statusCode, 200)
      t.same(answer.body, pong)
      t.notOk('ratelimit-limit' in answer.headers)
      t.notOk('x-ratelimit-limit' in answer.headers)
    }
    t.equal(counting.calls.count, 3)
  }
})

t.test('defaults: 100 per 900000 ms window, draft-spec RateLimit-* headers', async (t) => {
  t.same(DEFAULTS.rateLimiting, { windowMs: 900_000, limit: 100, standardHeaders: true, cacheSize: 100_000, storeTimeoutMs: 1_000 })
  const server = await limitedServer(t, {})
  const answer = await ping(server.app, { 'x-client': 'a' })
  t.equal(answer.statusCode, 200)
  t.same(answer.body, pong)
  t.equal(answer.headers['ratelimit-limit'], '100')
  t.equal(answer.headers['ratelimit-remaining'], '99')
  t.equal(answer.headers['ratelimit-reset'], '900')
  t.notOk('retry-after' in answer.headers, 'Retry-After only on a 429')
  t.notOk('x-ratelimit-limit' in answer.headers, 'no legacy X-RateLimit-* headers')
})

t.test('over the limit: 429 envelope with headers, and the handler does not run', async (t) => {
  const server = await limitedServer(t, { limit: 2, windowMs: 60_000 })
  const first = await ping(server.app, { 'x-client': 'a' })
  const second = await ping(server.app, { 'x-client': 'a' })
  t.same([first.statusCode, second.statusCode], [200, 200])
  t.same([first.headers['ratelimit-remaining'], second.headers['ratelimit-remaining']], ['1', '0'])
  const third = await ping(server.app, { 'x-client': 'a' })
  assertLimited(t, third)
  t.equal(third.headers['ratelimit-limit'], '2')
  t.equal(third.headers['ratelimit-remaining'], '0')
  t.equal(third.headers['ratelimit-reset'], third.headers['retry-after'])
  t.ok(Number(third.headers['retry-after']) <= 60, 'retry-after within the window')
  t.match(third.headers['content-type'], /^application\/json/)
  t.equal(server.calls.count, 2, 'the handler ran only for the allowed requests')

  // Another key has its own budget.
  const other = await ping(server.app, { 'x-client': 'b' })
  t.equal(other.statusCode, 200)
  t.same(other.body, pong)
})

t.test('the 429 goes through app.fetch with its headers', async (t) => {
  const server = await limitedServer(t, { limit: 1, windowMs: 60_000 })
  const request = () =>
    server.app.fetch('/api/services', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-client': 'fetcher' },
      body: JSON.stringify({ intent: 'execute', service: 'svc', action: 'ping', payload: {} }),
    })
  const ok = await request()
  t.equal(ok.status, 200)
  t.same(await ok.json(), pong)
  const limited = await request()
  t.equal(limited.status, 429)
  const retryAfter = Number(limited.headers.get('retry-after'))
  t.ok(retryAfter >= 1)
  t.equal(limited.headers.get('ratelimit-limit'), '1')
  t.same(await limited.json(), { status: false, message: messages.rateLimited(retryAfter), data: {} })
})

const pingFrom = (app: FastifyInstance, remoteAddress: string, headers: Record<string, string> = {}) => execute(app, 'svc', 'ping', {}, { headers, remoteAddress })

t.test('key order: limiting header, else request.ip (forwarded headers ignored without trustProxy); fallbacks are logged', async (t) => {
  const logger = captureLogger()
  const server = await limitedServer(t, { limit: 1, windowMs: 60_000 }, { diagnostics: true, resources: { logger } })
  const fallbackLines = () => logger.lines.filter((line) => line.atFunction === 'rateLimit.key')

  t.equal((await ping(server.app, { 'x-client': 'k1' })).statusCode, 200)
  assertLimited(t, await ping(server.app, { 'x-client': 'k1' }))
  // The header wins over the address: a fresh header value passes whatever the others say.
  t.equal((await pingFrom(server.app, '10.0.0.1', { 'x-client': 'k2', 'x-forwarded-for': '10.0.0.1' })).statusCode, 200)
  t.same(fallbackLines(), [], 'nothing logged while the limiting header is present')

  t.equal((await pingFrom(server.app, '10.0.0.1')).statusCode, 200)
  assertLimited(t, await pingFrom(server.app, '10.0.0.1'))
  // Issue 40: rotating X-Forwarded-For or X-Real-IP from an untrusted peer no longer buys a fresh budget.
  assertLimited(t, await pingFrom(server.app, '10.0.0.1', { 'x-forwarded-for': '203.0.113.7' }))
  assertLimited(t, await pingFrom(server.app, '10.0.0.1', { 'x-real-ip': '203.0.113.8', 'x-client': '' }))
  // Another address has its own budget: header-less clients no longer share one key.
  t.equal((await pingFrom(server.app, '10.0.0.2', { 'x-forwarded-for': '10.0.0.1' })).statusCode, 200)

  t.same(
    fallbackLines().map(({ level, message }) => ({ level, message })),
    [
      { level: 'info', message: messages.rateLimitKeyFallback('x-client', '10.0.0.1') },
      { level: 'info', message: messages.rateLimitKeyFallback('x-client', '10.0.0.1') },
      { level: 'info', message: messages.rateLimitKeyFallback('x-client', '10.0.0.1') },
      { level: 'info', message: messages.rateLimitKeyFallback('x-client', '10.0.0.1') },
      { level: 'info', message: messages.rateLimitKeyFallback('x-client', '10.0.0.2') },
    ],
  )
})

t.test('behind a trusted proxy (trustProxy: addresses) the forwarded client address is the key; from anyone else it is not', async (t) => {
  const server = await limitedServer(t, { limit: 1, windowMs: 60_000 }, { rest: { fastify: { trustProxy: ['10.9.0.1'] } } })
  t.equal((await pingFrom(server.app, '10.9.0.1', { 'x-forwarded-for': '203.0.113.1' })).statusCode, 200)
  assertLimited(t, await pingFrom(server.app, '10.9.0.1', { 'x-forwarded-for': '203.0.113.1' }))
  t.equal((await pingFrom(server.app, '10.9.0.1', { 'x-forwarded-for': '203.0.113.2' })).statusCode, 200, 'another client behind the proxy')
  // An untrusted peer naming a fresh forwarded address is keyed by its own address.
  t.equal((await pingFrom(server.app, '10.0.0.5', { 'x-forwarded-for': '203.0.113.3' })).statusCode, 200)
  assertLimited(t, await pingFrom(server.app, '10.0.0.5', { 'x-forwarded-for': '203.0.113.4' }))
})

t.test('unknown-client only where a request has no address at all', async (t) => {
  const { clientKeyOf } = await import('../plugins/client-key.js')
  const request = (headers: Record<string, string>, ip: string | undefined) => ({ headers, ip }) as unknown as Parameters<typeof clientKeyOf>[0]
  t.equal(clientKeyOf(request({}, undefined), 'x-client'), UNKNOWN_CLIENT)
  t.equal(clientKeyOf(request({ 'x-forwarded-for': '1.2.3.4', 'x-real-ip': '5.6.7.8' }, undefined), 'x-client'), UNKNOWN_CLIENT)
  t.equal(clientKeyOf(request({}, '10.1.1.1'), 'x-client'), '10.1.1.1')
  t.equal(clientKeyOf(request({ 'x-client': ' k ' }, '10.1.1.1'), 'x-client'), 'k')
})

t.test('fallback logging follows rateLimiting.diagnostics or the server diagnostics', async (t) => {
  const cases: Array<[TestConfig['diagnostics'], boolean | undefined, number]> = [
    [false, undefined, 0],
    [false, true, 1],
    [true, undefined, 1],
    [true, false, 0],
  ]
  for (const [serverDiagnostics, limiterDiagnostics, expected] of cases) {
    const logger = captureLogger()
    const server = await limitedServer(t, { diagnostics: limiterDiagnostics }, { diagnostics: serverDiagnostics, resources: { logger } })
    await ping(server.app)
    t.equal(
      logger.lines.filter((line) => line.atFunction === 'rateLimit.key').length,
      expected,
      `diagnostics ${serverDiagnostics}, rateLimiting.diagnostics ${limiterDiagnostics}`,
    )
  }
})

t.test('404s and custom routes added after createServer are limited too', async (t) => {
  const server = await limitedServer(t, { limit: 1, windowMs: 60_000 })
  let customCalls = 0
  server.app.get('/custom', async () => {
    customCalls++
    return { status: true, message: 'custom', data: {} }
  })

  const missing = await server.app.inject({ method: 'GET', url: '/nope', headers: { 'x-client': 'n' } })
  t.equal(missing.statusCode, 404)
  t.same(missing.json(), { status: false, message: messages.routeNotFound('/api'), data: {} })
  t.equal(missing.headers['ratelimit-remaining'], '0')
  const missingAgain = await server.app.inject({ method: 'GET', url: '/nope', headers: { 'x-client': 'n' } })
  assertLimited(t, { statusCode: missingAgain.statusCode, headers: missingAgain.headers, body: missingAgain.json() })

  const custom = await server.app.inject({ method: 'GET', url: '/custom', headers: { 'x-client': 'c' } })
  t.equal(custom.statusCode, 200)
  t.same(custom.json(), { status: true, message: 'custom', data: {} })
  t.equal(custom.headers['ratelimit-limit'], '1')
  const customAgain = await server.app.inject({ method: 'GET', url: '/custom', headers: { 'x-client': 'c' } })
  assertLimited(t, { statusCode: customAgain.statusCode, headers: customAgain.headers, body: customAgain.json() })
  t.equal(customCalls, 1)
})

t.test("a route's own config.rateLimit is left to the plugin: false opts out, an object sets its own limit", async (t) => {
  const server = await limitedServer(t, { limit: 1, windowMs: 60_000 })
  server.app.get('/health', { config: { rateLimit: false } }, async () => ({ status: true, message: 'ok', data: {} }))
  server.app.get('/roomy', { config: { rateLimit: { max: 3, timeWindow: 60_000 } } }, async () => ({ status: true, message: 'roomy', data: {} }))

  for (let i = 0; i < 3; i++) {
    const health = await server.app.inject({ method: 'GET', url: '/health', headers: { 'x-client': 'h' } })
    t.equal(health.statusCode, 200)
    t.notOk('ratelimit-limit' in health.headers)
  }
  const roomy = []
  for (let i = 0; i < 4; i++) roomy.push(await server.app.inject({ method: 'GET', url: '/roomy', headers: { 'x-client': 'r' } }))
  t.same(
    roomy.map((r) => r.statusCode),
    [200, 200, 200, 429],
  )
  t.equal(roomy[0].headers['ratelimit-limit'], '3')
  const last = roomy[3]
  assertLimited(t, { statusCode: last.statusCode, headers: last.headers, body: last.json() })
})

t.test('standardHeaders: false sends no rate-limit headers, the 429 envelope stays', async (t) => {
  const server = await limitedServer(t, { limit: 1, windowMs: 60_000, standardHeaders: false })
  const ok = await ping(server.app, { 'x-client': 'q' })
  t.equal(ok.statusCode, 200)
  const limited = await ping(server.app, { 'x-client': 'q' })
  t.equal(limited.statusCode, 429)
  for (const answer of [ok, limited]) {
    for (const name of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after', 'x-ratelimit-limit']) {
      t.notOk(name in answer.headers, `${name} absent`)
    }
  }
  t.equal(limited.body.status, false)
  t.same(limited.body.data, {})
  t.match(limited.body.message, /^Rate limit exceeded, retry in \d+ seconds$/)
  t.equal(server.calls.count, 1)
})

/** A @fastify/rate-limit store: counts per key in a Map, and can be told to fail. */
function recordingStore() {
  const seen: string[] = []
  const control = { failing: false }
  class Store {
    readonly counts = new Map<string, number>()
    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number) {
      seen.push(key)
      if (control.failing) return callback(new Error('store offline'))
      const current = (this.counts.get(key) ?? 0) + 1
      this.counts.set(key, current)
      callback(null, { current, ttl: timeWindow })
    }
    child() {
      return new Store()
    }
  }
  return { Store, seen, control }
}

t.test('rateLimiting.store: a custom store counts the requests', async (t) => {
  const { Store, seen } = recordingStore()
  const server = await limitedServer(t, { limit: 1, windowMs: 30_000, store: Store })
  const ok = await ping(server.app, { 'x-client': 's' })
  t.equal(ok.statusCode, 200)
  t.equal(ok.headers['ratelimit-reset'], '30')
  assertLimited(t, await ping(server.app, { 'x-client': 's' }))
  t.same(seen, ['s', 's'])
})

t.test('a stalled store (no answer at all) lets each request through after storeTimeoutMs, logged once, then resumes', async (t) => {
  const held: Array<() => void> = []
  const control = { stalled: true }
  class Stalling {
    readonly counts = new Map<string, number>()
    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number) {
      const answer = () => {
        const current = (this.counts.get(key) ?? 0) + 1
        this.counts.set(key, current)
        callback(null, { current, ttl: timeWindow })
      }
      if (control.stalled) held.push(answer)
      else answer()
    }
    child() {
      return new Stalling()
    }
  }
  const logger = captureLogger()
  const server = await limitedServer(t, { limit: 1, windowMs: 60_000, store: Stalling, storeTimeoutMs: 200 }, { diagnostics: true, resources: { logger } })
  const storeLines = () => logger.lines.filter((line) => line.atFunction === 'rateLimit.store').map(({ level, message }) => ({ level, message }))
  // Three requests over the limit of one while the store never answers: each is served (fail open).
  const answers = await Promise.all([0, 1, 2].map(() => ping(server.app, { 'x-client': 'stalled' })))
  t.same(answers.map((answer) => answer.statusCode), [200, 200, 200])
  t.same(answers[0]!.body, pong)
  t.equal(held.length, 3, 'the store was asked each time and never answered')
  t.same(storeLines(), [{ level: 'error', message: messages.rateLimitStoreDown('no answer within 200ms (rest.rateLimiting.storeTimeoutMs)') }])
  // The late answers arrive after their requests were served: nothing breaks.
  for (const answer of held.splice(0)) answer()
  control.stalled = false
  t.equal((await ping(server.app, { 'x-client': 'fresh' })).statusCode, 200)
  assertLimited(t, await ping(server.app, { 'x-client': 'fresh' }))
  t.same(storeLines().at(-1), { level: 'info', message: messages.rateLimitStoreUp })
  t.equal(server.calls.count, 4)
})

t.test('a failing store lets requests through and logs the outage once, then the recovery', async (t) => {
  const { Store, control } = recordingStore()
  const logger = captureLogger()
  const server = await limitedServer(t, { limit: 1, windowMs: 60_000, store: Store }, { diagnostics: true, resources: { logger } })
  const storeLines = () => logger.lines.filter((line) => line.atFunction === 'rateLimit.store').map(({ level, message }) => ({ level, message }))

  control.failing = true
  for (let i = 0; i < 3; i++) {
    const answer = await ping(server.app, { 'x-client': 'f' })
    t.equal(answer.statusCode, 200)
    t.same(answer.body, pong)
    t.notOk('ratelimit-limit' in answer.headers, 'no limit headers while the store is down')
  }
  t.same(storeLines(), [{ level: 'error', message: messages.rateLimitStoreDown('store offline') }], 'logged once per outage')

  control.failing = false
  t.equal((await ping(server.app, { 'x-client': 'f' })).statusCode, 200)
  assertLimited(t, await ping(server.app, { 'x-client': 'f' }))
  t.same(storeLines(), [
    { level: 'error', message: messages.rateLimitStoreDown('store offline') },
    { level: 'info', message: messages.rateLimitStoreUp },
  ])
  t.equal(server.calls.count, 4)
})

t.test('GET /status is not rate limited: a load balancer checking it is not refused for the traffic of others', async (t) => {
  const server = await limitedServer(t, { limit: 2, windowMs: 60_000 }, { serverName: 'limited', rest: { enableStatus: true } })
  // Health checks carry no client key: keyed by their address, as every other such request from it.
  for (let i = 0; i < 5; i++) {
    const check = await server.app.inject({ method: 'GET', url: '/status' })
    t.equal(check.statusCode, 200, `check ${i + 1} answers 200`)
    t.same(check.json(), { status: true, message: messages.running('limited'), data: {} })
    t.equal(check.headers['ratelimit-limit'], undefined, 'no rate-limit headers on /status')
  }
  // The same key is limited everywhere else, and /status stays up after it.
  t.same([(await ping(server.app)).statusCode, (await ping(server.app)).statusCode, (await ping(server.app)).statusCode], [200, 200, 429])
  t.equal((await server.app.inject({ method: 'GET', url: '/status' })).statusCode, 200)
})
