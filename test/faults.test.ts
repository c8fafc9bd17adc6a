import t from 'tap'
import { once } from 'node:events'
import { existsSync, readdirSync } from 'node:fs'
import { createServer as createTcpServer, connect, type Server, type Socket } from 'node:net'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import { drizzle } from 'drizzle-orm/node-postgres'
import pg from 'pg'
import Type from 'typebox'
import { Redis } from 'ioredis'
import {
  createAction,
  createModel,
  handleError,
  messages,
  Ok,
  type DBX,
  type LogEntry,
  type Service,
  type ServiceLogger,
} from '../lib/index.js'
import { buildServer } from './helpers/server.js'
import { freePort, redisSkipReason, startRedis } from './helpers/redis.js'
import { postgresSkipReason, startCluster, type TapTest } from './helpers/postgres.js'
import { recordingLogger } from './helpers/logger.js'

// Faults while serving: the rate limiter's Redis stops mid-run, the database refuses connections or
// drops them, a handler never answers. Each time the server answers envelopes below 500 (504 for a
// timeout), keeps serving, and recovers once the dependency is back.

const WAIT_MS = 20_000


/** Polls `check` every 20 ms until it is true; fails after WAIT_MS. */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

t.test('Redis stops during a run: requests are served unlimited, one line is logged, limiting resumes when it returns', { skip: redisSkipReason() }, async (t) => {
  const redis = await startRedis()
  t.teardown(() => redis.stop())
  // The fail-fast client docs/rate-limiting.md recommends.
  const client = new Redis({ host: '127.0.0.1', port: redis.port, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 })
  client.on('error', () => {}) // reconnect attempts while Redis is down are expected here
  await client.connect()
  t.teardown(() => client.disconnect())

  const ping = createAction({ name: 'ping', description: 'Pong', handler: () => Ok({ pong: true }) })
  const { logger, entries } = recordingLogger()
  const server = await buildServer({
    services: [{ name: 'svc', description: 'Ping', actions: [ping] }],
    diagnostics: true,
    resources: { logger },
    rest: { rateLimiting: { limitingHeader: 'x-client', limit: 1_000_000, windowMs: 60_000, redis: client } },
  })
  t.teardown(() => server.close())
  const address = await server.app.listen({ port: 0, host: '127.0.0.1' })
  const body = JSON.stringify({ intent: 'execute', service: 'svc', action: 'ping', payload: {} })
  const pong = { status: true, message: messages.executed('svc', 'ping'), data: { pong: true } }

  // Four clients send requests back to back until told to stop, through the whole outage.
  const seen: Array<{ status: number; limited: boolean; body: unknown }> = []
  let running = true
  const worker = async (n: number) => {
    for (let i = 0; running && i < 20_000; i++) {
      try {
        const response = await fetch(`${address}/api/services`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-client': `client-${n}` },
          body,
        })
        seen.push({ status: response.status, limited: response.headers.has('ratelimit-limit'), body: await response.json() })
      } catch (error) {
        seen.push({ status: 0, limited: false, body: String(error) }) // a failed request fails the test below
      }
    }
  }
  const workers = [0, 1, 2, 3].map(worker)
  const stopWorkers = async () => {
    running = false
    await Promise.all(workers)
  }
  t.teardown(stopWorkers)

  await until('requests before the outage', () => seen.length >= 40)
  t.ok(seen.every((answer) => answer.limited), 'limited while Redis is up')

  // Polled, not `once(client, 'close')`: events.once rejects when the client emits 'error' (ECONNRESET) first.
  await redis.stop()
  await until('the client to notice', () => client.status !== 'ready')
  const outageStart = seen.length
  await until('requests during the outage', () => seen.slice(outageStart).filter((answer) => !answer.limited).length >= 40)

  const restarted = await startRedis(redis.port)
  t.teardown(() => restarted.stop())
  await until('the client to reconnect', () => client.status === 'ready')
  const recoveryStart = seen.length
  await until('limited requests after the recovery', () => seen.slice(recoveryStart).filter((answer) => answer.limited).length >= 40)
  await stopWorkers()

  const unexpected = seen.filter((answer) => answer.status !== 200 || JSON.stringify(answer.body) !== JSON.stringify(pong))
  t.same(unexpected, [], `all ${seen.length} answers are 200 with the pong envelope: nothing 5xx, nothing limited by mistake`)
  const store = entries.filter((entry) => entry.atFunction === 'rateLimit.store')
  t.equal(store.length, 2, 'one line for the outage, one for the recovery')
  t.equal(store[0].level, 'error')
  t.ok(store[0].message.startsWith(messages.rateLimitStoreDown('')), store[0].message)
  t.match(store[1], { level: 'info', message: messages.rateLimitStoreUp })
  const last = await fetch(`${address}/api/services`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-client': 'fresh' }, body })
  t.equal(last.headers.get('ratelimit-remaining'), String(1_000_000 - 1), 'counting again in the fresh Redis')
})

// --- The database -----------------------------------------------------------------------------

const notes = pgTable('fault_notes', {
  id: uuid('id').primaryKey().defaultRandom(),
  title: text('title').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
})
const setup = `CREATE TABLE IF NOT EXISTS fault_notes (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  title text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
)`

/** A notes service on `db` through createModel, plus a raw query that takes its time. */
function notesService(db: DBX): Service {
  const model = createModel(notes, { name: 'note', db })
  return {
    name: 'notes',
    description: 'createModel on a database that may go away',
    actions: [
      createAction({
        name: 'create',
        description: 'Creates a note',
        validation: Type.Object({ title: Type.String() }),
        handler: (data) => model.create({ data: { title: data.title } }),
      }),
      createAction({
        name: 'list',
        description: 'Lists the notes',
        handler: async () => {
          const all = await model.findAll()
          return all.ok ? Ok({ titles: all.value.map((note) => note.title) }) : all
        },
      }),
      createAction({
        name: 'sleep',
        description: 'A query that is still running when the database goes away',
        handler: async () => {
          try {
            await db.execute(sql`SELECT pg_sleep(30)`)
            return Ok({ slept: true })
          } catch (error) {
            return handleError({ message: 'The query was cut off', data: { error: String(error) }, atFunction: 'notes.sleep' })
          }
        },
      }),
    ],
  }
}

/** A pg pool as an application should make one: an idle client's error must have a listener, or it ends the process. */
function appPool(url: string) {
  const poolErrors: string[] = []
  const pool = new pg.Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 5_000 })
  pool.on('error', (error) => poolErrors.push(error.message))
  return { pool, poolErrors, db: drizzle({ client: pool }) as DBX }
}

async function notesServer(t: TapTest, db: DBX) {
  const { logger, entries } = recordingLogger()
  const server = await buildServer({ services: [notesService(db)], resources: { logger, database: db }, rest: { enableStatus: true } })
  t.teardown(() => server.close())
  const address = await server.app.listen({ port: 0, host: '127.0.0.1' })
  const call = async (action: string, payload: Record<string, unknown> = {}) => {
    const response = await fetch(`${address}/api/services`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ intent: 'execute', service: 'notes', action, payload }),
    })
    return { statusCode: response.status, body: await response.json() }
  }
  const status = async () => {
    const response = await fetch(`${address}/status`)
    return { statusCode: response.status, body: await response.json() }
  }
  return { call, status, entries }
}

const running = { statusCode: 200, body: { status: true, message: messages.running('test-server'), data: {} } }

t.test('the database refuses connections: createModel answers the handleError envelope and the server stays up', async (t) => {
  const port = await freePort() // nothing listens there
  const { pool, db } = appPool(`postgres://postgres@127.0.0.1:${port}/postgres`)
  t.teardown(() => pool.end())
  const { call, status, entries } = await notesServer(t, db)
  const refused = `connect ECONNREFUSED 127.0.0.1:${port}`

  const answers: unknown[] = []
  for (let i = 1; i <= 3; i++) {
    const created = await call('create', { title: `n${i}` })
    const listed = await call('list')
    answers.push(created, listed)
    t.same(created, { statusCode: 400, body: { status: false, message: `[log-${2 * i - 1}] ${messages.databaseFailed('note', 'create')}`, data: {} } })
    t.same(listed, { statusCode: 400, body: { status: false, message: `[log-${2 * i}] ${messages.databaseFailed('note', 'findAll')}`, data: {} } })
  }
  t.match(entries, [
    { level: 'error', atFunction: 'note.create', message: messages.databaseFailed('note', 'create'), data: { error: refused, code: 'ECONNREFUSED' } },
    { level: 'error', atFunction: 'note.findAll', message: messages.databaseFailed('note', 'findAll'), data: { error: refused } },
  ])
  t.notMatch(JSON.stringify(answers), /ECONNREFUSED|127\.0\.0\.1/, 'no host or port reaches the client')
  t.notMatch(JSON.stringify(entries.map((entry) => entry.message)), /SELECT|INSERT|Failed query/i, 'the SQL stays in the log data, never in the message')
  t.same(await status(), running, 'the server keeps serving')
})

/** A loopback TCP proxy in front of the database: `down()` refuses new connections and cuts the open ones. */
function tcpProxy(target: { host: string; port: number }) {
  const sockets = new Set<Socket>()
  let server: Server | undefined
  let port = 0
  return {
    get port() {
      return port
    },
    async up() {
      server = createTcpServer((client) => {
        const upstream = connect(target.port, target.host)
        const drop = () => {
          client.destroy()
          upstream.destroy()
          sockets.delete(client)
          sockets.delete(upstream)
        }
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.on('error', drop)
          socket.on('close', drop)
        }
        client.pipe(upstream).pipe(client)
      })
      server.listen(port, '127.0.0.1')
      await once(server, 'listening')
      port = (server.address() as { port: number }).port
    },
    async down() {
      const closing = server ? once(server, 'close') : Promise.resolve()
      server?.close()
      for (const socket of sockets) socket.destroy()
      sockets.clear()
      await closing
      server = undefined
    },
  }
}

/** $PG_BIN, else the newest /usr/lib/postgresql/<version>/bin (as test/helpers/postgres.ts looks for it). */
function postgresBin(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN
  const root = '/usr/lib/postgresql'
  const versions = readdirSync(root).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a))
  const bin = versions.map((version) => join(root, version, 'bin')).find((dir) => existsSync(join(dir, 'postgres')))
  if (!bin) throw new Error('no PostgreSQL binaries')
  return bin
}

t.test('PostgreSQL goes away and comes back: Err envelopes while it is away, the same server recovers', { skip: postgresSkipReason() }, async (t) => {
  const cluster = process.env.DATABASE_URL ? undefined : await startCluster(postgresBin())
  t.teardown(() => cluster?.stop())
  const direct = new URL(process.env.DATABASE_URL ?? cluster!.url)
  const schema = `fault_test_${process.pid}_${Date.now()}`
  const admin = new pg.Client({ connectionString: direct.href })
  await admin.connect()
  await admin.query(`CREATE SCHEMA "${schema}"`)
  t.teardown(async () => {
    await admin.query(`DROP SCHEMA "${schema}" CASCADE`)
    await admin.end()
  })

  const proxy = tcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) })
  await proxy.up()
  t.teardown(() => proxy.down())
  const viaProxy = new URL(direct.href)
  viaProxy.hostname = '127.0.0.1'
  viaProxy.port = String(proxy.port)
  viaProxy.searchParams.set('options', `-c search_path=${schema}`)
  const { pool, poolErrors, db } = appPool(viaProxy.href)
  t.teardown(() => pool.end())
  await pool.query(setup)
  const { call, status, entries } = await notesServer(t, db)
  const executed = (action: string) => messages.executed('notes', action)

  t.match(await call('create', { title: 'before' }), { statusCode: 200, body: { status: true, message: executed('create'), data: { title: 'before' } } })
  // Two at once: the pool keeps two clients, one of them idle when the database goes away.
  const both = await Promise.all([call('list'), call('list')])
  t.same(both.map((answer) => answer.body.data), [{ titles: ['before'] }, { titles: ['before'] }])
  t.equal(pool.totalCount, 2)

  // A query in flight when the database goes away.
  const sleeping = call('sleep')
  await until('pg_sleep to run', async () => {
    const { rows } = await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%'")
    return rows[0].n > 0
  })
  await proxy.down()
  const cut = await sleeping
  t.equal(cut.statusCode, 400)
  t.match(cut.body, { status: false, message: /^\[log-\d+\] The query was cut off$/, data: {} })
  t.same(Object.keys(cut.body.data), [])
  await until('the pool to drop its broken clients', () => pool.totalCount === 0)

  const refused = `connect ECONNREFUSED 127.0.0.1:${proxy.port}`
  for (const [action, payload, operation] of [
    ['create', { title: 'during' }, 'note.create'],
    ['list', {}, 'note.findAll'],
  ] as const) {
    const answer = await call(action, payload)
    const entry = entries[entries.length - 1]
    t.same(answer, { statusCode: 400, body: { status: false, message: `[${entry.id}] ${messages.databaseFailed('note', operation.slice(5))}`, data: {} } }, `${action} while refused`)
    t.match(entry, { level: 'error', atFunction: operation, data: { error: refused } })
  }
  t.same(await status(), running, 'the server keeps serving while the database is away')
  t.ok(poolErrors.length > 0, `idle clients reported the cut through the pool's error event (${poolErrors.length})`)

  await proxy.up()
  t.match(await call('create', { title: 'after' }), { statusCode: 200, body: { status: true, message: executed('create'), data: { title: 'after' } } })
  t.same(await call('list'), { statusCode: 200, body: { status: true, message: executed('list'), data: { titles: ['after', 'before'] } } })
})

// --- Handlers that never answer -----------------------------------------------------------------

t.test('a handler that never resolves answers the 504 envelope over HTTP; the server keeps serving', async (t) => {
  const never = () => new Promise<never>(() => {})
  const service: Service = {
    name: 'slow',
    description: 'Handlers that hang',
    actions: [
      createAction({ name: 'hangs', description: 'Global timeout', handler: never }),
      createAction({ name: 'hangsOwn', description: 'Own, shorter timeout', timeout: 50, handler: never }),
      createAction({ name: 'patient', description: 'Own, longer timeout', timeout: 60_000, handler: async () => Ok({ done: true }) }),
      createAction({
        name: 'hookHangs',
        description: 'Its before hook hangs',
        hooks: { before: [{ service: 'slow', action: 'hangs', isCritical: true }] },
        handler: () => Ok({ unreachable: true }),
      }),
    ],
  }
  const server = await buildServer({ services: [service], actionTimeout: 200 })
  t.teardown(() => server.close())
  const address = await server.app.listen({ port: 0, host: '127.0.0.1' })
  const call = async (action: string) => {
    const response = await fetch(`${address}/api/services`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ intent: 'execute', service: 'slow', action, payload: {} }),
    })
    return { statusCode: response.status, body: await response.json() }
  }

  const [global, own, hook] = await Promise.all([call('hangs'), call('hangsOwn'), call('hookHangs')])
  t.same(global, { statusCode: 504, body: { status: false, message: messages.actionTimedOut('slow.hangs', 200), data: {} } })
  t.same(own, { statusCode: 504, body: { status: false, message: messages.actionTimedOut('slow.hangsOwn', 50), data: {} } })
  t.same(hook, {
    statusCode: 400,
    body: { status: false, message: messages.hookFailed('slow.hangs', messages.actionTimedOut('slow.hangs', 200)), data: {} },
  })
  t.same(await call('patient'), { statusCode: 200, body: { status: true, message: messages.executed('slow', 'patient'), data: { done: true } } })
})
