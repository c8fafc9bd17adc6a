/**
 * Issue 40, stores that stall: with its stores paused by SIGSTOP (connections open, nothing answers)
 * the template hung every request (>15 s with Redis, no answer after 8 s with PostgreSQL). The example
 * app (the same fail-fast settings as the template: ioredis without offline queue and with a command
 * timeout, a pg pool with connectionTimeoutMillis and statement_timeout, an actionTimeout) runs on a
 * real PostgreSQL and Redis under a steady load of writes:
 * - Redis paused 5 s: every request answered within rest.rateLimiting.storeTimeoutMs (1000) + 1 s;
 * - PostgreSQL paused 5 s: every write answered within ACTION_TIMEOUT_MS + 1 s, a 504 envelope;
 * - both resumed: writes are served again, and every acknowledged write is in PostgreSQL, once.
 * Wall-clock bounds are the behaviour here, with a second of slack each.
 */
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import t from 'tap'
import { sleep, startInstance, stopProcess } from '../helpers/fleet.js'
import { postgresBin, startCluster } from '../helpers/postgres.js'
import { freePort, redisSkipReason, startRedis } from '../helpers/redis.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const STORE_TIMEOUT_MS = 1000
const ACTION_TIMEOUT_MS = 2000
const PAUSE_MS = 5000
const WRITERS = 3

t.setTimeout(180_000)
const bin = postgresBin()
const skip = (!bin && 'no PostgreSQL binaries (initdb, postgres) installed') || redisSkipReason() || false

interface Write {
  id: string
  phase: string
  ms?: number
  status?: number
  message?: string
}

t.test('Redis, then PostgreSQL, paused under load: every request answered in time; resumed: all served, nothing acknowledged lost', { skip }, async (t) => {
  const [database, redis] = await Promise.all([startCluster(bin!), startRedis()])
  const port = await freePort()
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: database.url, REDIS_URL: `redis://127.0.0.1:${redis.port}`, RATE_LIMIT: '1000000', ACTION_TIMEOUT_MS: String(ACTION_TIMEOUT_MS), JWT_SECRET: 'stall-test-secret-0123456789abcdef' }
  for (const name of ['PGLITE_DIR', 'DIAGNOSTICS', 'NODE_OPTIONS', 'MAX_HEAP_USED_MB', 'LOAD_SHEDDING']) delete env[name]
  const instance = await startInstance(join(root, 'example', 'server.ts'), 'example', port, env, root)
  const output = () => instance.output()
  // One teardown, in this order: a paused server is resumed first (a stopped process ignores SIGTERM).
  t.teardown(async () => {
    redis.resume()
    database.resume()
    await stopProcess(instance.child, 'SIGKILL')
    await Promise.all([database.stop(), redis.stop()])
  })

  const run = `s${process.pid}`
  const writes: Write[] = []
  let phase = 'start'
  let stopping = false
  const writer = async (w: number) => {
    for (let i = 0; !stopping; i++) {
      const write: Write = { id: `${run}-${w}-${i}`, phase }
      writes.push(write)
      const started = performance.now()
      try {
        const response = await fetch(`http://127.0.0.1:${port}/api/services`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': `writer-${w}` },
          body: JSON.stringify({ intent: 'execute', service: 'tasks', action: 'create', payload: { title: `stall ${write.id}` } }),
          signal: AbortSignal.timeout(30_000),
        })
        const body = (await response.json()) as { status: boolean; message: string }
        write.status = response.status
        write.message = body.message
      } catch (error) {
        write.status = 0
        write.message = String(error)
      }
      write.ms = performance.now() - started
      await sleep(20)
    }
  }
  const writers = Array.from({ length: WRITERS }, (_, w) => writer(w))
  const served = (from: string, count: number) =>
    (async () => {
      for (let i = 0; writes.filter((w) => w.phase === from && w.status === 200).length < count; i++) {
        if (i > 1500) throw new Error(`fewer than ${count} writes served in phase ${from}:\n${output()}`)
        await sleep(20)
      }
    })()
  await served('start', 10)

  phase = 'redis paused'
  redis.pause()
  await sleep(PAUSE_MS)
  phase = 'redis resumed'
  redis.resume()
  await served('redis resumed', 10)
  const duringRedis = writes.filter((w) => w.phase === 'redis paused' && w.status !== undefined)
  t.ok(duringRedis.length >= WRITERS, `${duringRedis.length} writes sent while Redis was paused`)
  t.same(duringRedis.filter((w) => w.status !== 200), [], 'each served (the limiter fails open)')
  t.same(duringRedis.filter((w) => w.ms! > STORE_TIMEOUT_MS + 1000), [], `each answered within ${STORE_TIMEOUT_MS + 1000} ms`)

  phase = 'postgres paused'
  database.pause()
  await sleep(PAUSE_MS)
  phase = 'postgres resumed'
  database.resume()
  await served('postgres resumed', 10)
  // A write sent while paused, whose answer came after the resume, may be served: check what was answered during the pause.
  const duringPg = writes.filter((w) => w.phase === 'postgres paused' && w.status !== undefined)
  t.ok(duringPg.length >= WRITERS, `${duringPg.length} writes sent while PostgreSQL was paused`)
  t.same(duringPg.filter((w) => w.ms! > ACTION_TIMEOUT_MS + 1000), [], `each answered within ${ACTION_TIMEOUT_MS + 1000} ms`)
  const timedOut = duringPg.filter((w) => w.status === 504)
  t.ok(timedOut.length >= WRITERS, `${timedOut.length} answered 504`)
  for (const w of timedOut) t.equal(w.message, `Action 'tasks.create' timed out after ${ACTION_TIMEOUT_MS}ms`)
  t.same(duringPg.filter((w) => w.status !== 504 && w.status !== 200 && w.status !== 503), [], 'nothing but 504 (or 503, or served once resumed)')

  stopping = true
  await Promise.all(writers)
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  const { rows } = await client.query<{ title: string; count: number }>(`select title, count(*)::int as count from tasks where title like $1 group by title`, [`stall ${run}-%`])
  await client.end()
  const found = new Map(rows.map((row) => [row.title.slice('stall '.length), row.count]))
  const acknowledged = writes.filter((w) => w.status === 200)
  t.same(acknowledged.filter((w) => !found.has(w.id)).map((w) => w.id), [], `every acknowledged write is in PostgreSQL (${acknowledged.length})`)
  t.same(rows.filter((row) => row.count !== 1), [], 'none twice')
  t.comment(`writes ${writes.length}; Redis paused: ${duringRedis.length} sent, slowest ${Math.round(Math.max(...duringRedis.map((w) => w.ms!)))} ms; PostgreSQL paused: ${duringPg.length} sent, ${timedOut.length} x 504, slowest ${Math.round(Math.max(...duringPg.map((w) => w.ms!)))} ms`)
})
