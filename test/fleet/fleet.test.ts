import t from 'tap'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { messages } from '../../lib/index.js'
import { drainingMessage } from '../../example/app.js'
import { fleetSkipReason, haproxyBin, haproxyConfig, killInstances, provideDatabase, startBalancer, startInstance, stopProcess, waitFor, sleep, type Instance } from '../helpers/fleet.js'
import { canConnect } from '../helpers/net.js'
import { freePort, startRedis } from '../helpers/redis.js'

// A fleet: three instances of the example app (`node --import tsx example/server.ts`, each its own
// process) behind HAProxy, one PostgreSQL, one Redis, all on loopback ports, all torn down after.
// A steady, bounded load of writes (tasks.create, each carrying an id the client made in its title)
// runs through the balancer while one instance is stopped with SIGTERM (no request may fail), one
// is killed with SIGKILL (requests in flight may fail; every acknowledged write must be in
// PostgreSQL, none twice), both come back and serve again. Then a rate limit of N per window is
// held across the fleet through Redis, and one instance shedding load leaves the others serving.
// The HAProxy configuration is the one docs/deployment.md shows.

const root = fileURLToPath(new URL('../..', import.meta.url))
const RATE_LIMIT = 30
const SLOW_MS = 4000
/** SHUTDOWN_DRAIN_MS: longer than HAProxy needs to see a failing /status (fall 2 x inter 200 ms). */
const DRAIN_MS = 1000
/** Load: this many writers, each sending one write at a time with this pause between two. */
const WRITERS = 3
const PAUSE_MS = 10

// The file takes 40 to 70 s on a busy 2-core machine (eight processes start, three restart): give it
// 240 s instead of .taprc's 120, so a slow CI machine is not a failure (tap's root setTimeout tells the runner).
t.setTimeout(240_000)

const haproxy = haproxyBin()
const skip = fleetSkipReason()
const script = join(root, 'example', 'server.ts')

type Outcome = 'acknowledged' | 'shed' | 'failed'

interface Write {
  id: string
  /** The phase when the write was sent, and when its answer (or failure) came back. */
  phase: string
  endPhase?: string
  outcome?: Outcome
  server?: string
  detail?: string
}

/** The load: WRITERS loops, each one write at a time, every write with an id of its own in its title. */
function startLoad(balancer: string, run: string) {
  const writes: Write[] = []
  let phase = 'start'
  let stopping = false
  const writer = async (w: number) => {
    for (let i = 0; !stopping; i++) {
      const write: Write = { id: `${run}-${w}-${i}`, phase }
      writes.push(write)
      try {
        const response = await fetch(`${balancer}/api/services`, {
          method: 'POST',
          // Each write is its own rate-limit client, so the load is never limited.
          headers: { 'content-type': 'application/json', 'x-api-key': `writer-${write.id}` },
          body: JSON.stringify({ intent: 'execute', service: 'tasks', action: 'create', payload: { title: `fleet ${write.id}` } }),
          signal: AbortSignal.timeout(30_000),
        })
        write.server = response.headers.get('x-fleet-server') ?? undefined
        const text = await response.text()
        let body: { status?: unknown; message?: unknown } = {}
        try {
          body = JSON.parse(text)
        } catch {
          // HAProxy's own error pages are HTML.
        }
        if (response.status === 200 && body.status === true) write.outcome = 'acknowledged'
        else if (response.status === 503 && body.message === messages.underPressure) write.outcome = 'shed'
        else write.outcome = 'failed'
        write.detail = `${response.status} ${typeof body.message === 'string' ? body.message : text.slice(0, 80)}`
      } catch (error) {
        write.outcome = 'failed'
        const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : ''
        write.detail = `${error instanceof Error ? error.message : String(error)} ${cause}`.trim()
      }
      write.endPhase = phase
      await sleep(PAUSE_MS)
    }
  }
  const done = Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)))
  return {
    writes,
    setPhase: (name: string) => (phase = name),
    /** Resolves once `count` more writes were acknowledged (by `server`, when given). */
    acknowledged: (count: number, server?: string) => {
      const from = writes.length
      return waitFor(
        `${count} more acknowledged writes${server ? ` served by ${server}` : ''}`,
        () => writes.slice(from).filter((w) => w.outcome === 'acknowledged' && (!server || w.server === server)).length >= count,
        () => JSON.stringify(writes.slice(-5)),
      )
    },
    stop: async () => {
      stopping = true
      await done
    },
  }
}

t.test('docs/deployment.md shows the HAProxy configuration this test uses', async (t) => {
  const page = readFileSync(join(root, 'docs', 'deployment.md'), 'utf8')
  const block = /^```haproxy\n([\s\S]*?)^```/m.exec(page)?.[1]
  t.equal(block, haproxyConfig(':8080', { a: '10.0.0.11:8000', b: '10.0.0.12:8000', c: '10.0.0.13:8000' }, '/run/haproxy/admin.sock'))
})

t.test('three instances behind HAProxy with PostgreSQL and Redis: drain, crash, rejoin, shared limits, load shedding', { skip }, async (t) => {
  const started = Date.now()
  // Torn down last-started first (load, HAProxy, instances, Redis, PostgreSQL, files), also on failure.
  const cleanups: (() => unknown)[] = []
  const teardown = (fn: () => unknown) => cleanups.push(fn)
  t.teardown(async () => {
    for (const fn of cleanups.reverse()) await Promise.resolve().then(fn).catch((error) => t.comment(`teardown: ${error}`))
  })
  const dir = mkdtempSync(join(tmpdir(), 'fastify-actions-fleet-'))
  teardown(() => rmSync(dir, { recursive: true, force: true }))

  const [database, redis] = await Promise.all([provideDatabase(), startRedis()])
  teardown(() => database.stop())
  teardown(() => redis.stop())

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: database.url,
    REDIS_URL: `redis://127.0.0.1:${redis.port}`,
    RATE_LIMIT: String(RATE_LIMIT),
    RATE_LIMIT_WINDOW_MS: String(10 * 60_000),
    LOAD_SHEDDING: '1',
    SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
    JWT_SECRET: 'fleet-test-secret-0123456789abcdef',
    ATTACHMENTS_DIR: join(dir, 'attachments'),
  }
  for (const name of ['PGLITE_DIR', 'DIAGNOSTICS', 'NODE_OPTIONS', 'MAX_HEAP_USED_MB']) delete env[name]

  const instances: Record<string, Instance> = {}
  teardown(async () => {
    await killInstances()
  })
  const ports = { a: await freePort(), b: await freePort(), c: await freePort() }
  // All three at once, as a fleet starts: their migrations meet on one database.
  const first = await Promise.all(Object.entries(ports).map(([name, port]) => startInstance(script, name, port, env, root)))
  for (const instance of first) instances[instance.name] = instance

  const front = await startBalancer(haproxy!, dir, ports)
  teardown(() => stopProcess(front.process, 'SIGUSR1'))
  const { stateIs } = front
  const frontendPort = front.port
  for (const name of Object.keys(ports)) await stateIs(name, 'UP')
  t.ok(await canConnect(frontendPort), 'HAProxy listens')

  const balancer = front.url
  const run = `r${process.pid}`
  const load = startLoad(balancer, run)
  let loadStopped = false
  teardown(async () => {
    if (!loadStopped) await load.stop()
  })
  for (const name of Object.keys(ports)) await load.acknowledged(5, name)
  t.pass('the load is served by a, b and c')

  // SIGTERM a while it runs a slow request sent to it directly, under the load.
  const a = instances.a
  const slow = fetch(`http://127.0.0.1:${a.port}/api/services`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ intent: 'execute', service: 'greetings', action: 'slow', payload: { ms: SLOW_MS } }),
  }).then(async (response) => ({ status: response.status, body: await response.json() }))
  await waitFor('the slow request on a', () => a.output().includes(`greetings.slow: waiting ${SLOW_MS}ms`), a.output)
  load.setPhase('sigterm')
  let slowAnswered = false
  void slow.then(() => (slowAnswered = true))
  a.child.kill('SIGTERM')
  const aStatus = () => fetch(`http://127.0.0.1:${a.port}/status`).then(async (r) => ({ status: r.status, body: await r.json() }), () => undefined)
  let draining: Awaited<ReturnType<typeof aStatus>>
  await waitFor('a to drain', async () => (draining = await aStatus())?.status === 503, a.output)
  t.same(draining, { status: 503, body: { status: false, message: drainingMessage, data: {} } }, 'a drains: /status answers 503')
  await stateIs('a', 'DOWN')
  await waitFor('a to refuse new connections', async () => !(await canConnect(a.port)))
  t.notOk(slowAnswered, 'a refuses new connections while its slow request still runs')
  t.same(await slow, { status: 200, body: { status: true, message: messages.executed('greetings', 'slow'), data: { waitedMs: SLOW_MS } } }, 'a finishes the request it had')
  t.same(await a.exited, [0, null], 'a exits 0 after SIGTERM')
  await stateIs('a', 'DOWN')
  await load.acknowledged(20)
  const sigterm = load.writes.filter((w) => (w.phase === 'sigterm' || w.endPhase === 'sigterm') && w.outcome !== undefined)
  t.same(
    sigterm.filter((w) => w.outcome !== 'acknowledged'),
    [],
    `no write failed at the client while a drained (${sigterm.length} writes)`,
  )

  // a comes back on its port and serves again.
  load.setPhase('rejoin a')
  instances.a = await startInstance(script, 'a', ports.a, env, root)
  await stateIs('a', 'UP')
  await load.acknowledged(5, 'a')
  t.pass('a restarted, HAProxy sees it UP, and it serves writes again')

  // SIGKILL b under the load.
  const b = instances.b
  load.setPhase('sigkill')
  b.child.kill('SIGKILL')
  t.same(await b.exited, [null, 'SIGKILL'], 'b is killed')
  await stateIs('b', 'DOWN')
  await load.acknowledged(20)
  load.setPhase('rejoin b')
  instances.b = await startInstance(script, 'b', ports.b, env, root)
  await stateIs('b', 'UP')
  await load.acknowledged(5, 'b')
  t.pass('b restarted after SIGKILL, HAProxy sees it UP, and it serves writes again')

  // c sheds load (a heap threshold below its heap use): the others keep serving.
  load.setPhase('shedding c')
  await stopProcess(instances.c.child)
  instances.c = await startInstance(script, 'c', ports.c, { ...env, MAX_HEAP_USED_MB: '1' }, root)
  await waitFor('c to report its load shedding', async () => {
    const status = (await (await fetch(`http://127.0.0.1:${ports.c}/status`)).json()) as { data?: { underPressure?: boolean } }
    return status.data?.underPressure === true
  })
  const direct = await fetch(`http://127.0.0.1:${ports.c}/api/services`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ intent: 'execute', service: 'greetings', action: 'hello', payload: { name: 'c' } }),
  })
  t.equal(direct.status, 503, 'c answers 503 while it sheds')
  t.ok(direct.headers.get('retry-after'), 'with Retry-After')
  t.same(await direct.json(), { status: false, message: messages.underPressure, data: {} })
  await stateIs('c', 'DOWN')
  load.setPhase('c shed')
  await load.acknowledged(30)
  const whileShedding = load.writes.filter((w) => w.phase === 'c shed' && w.endPhase === 'c shed' && w.outcome !== undefined)
  t.same(
    whileShedding.filter((w) => w.outcome !== 'acknowledged'),
    [],
    `with c out of rotation every write succeeds on a and b (${whileShedding.length} writes)`,
  )
  t.same(new Set(whileShedding.map((w) => w.server)), new Set(['a', 'b']), 'served by a and b')

  load.setPhase('end')
  await load.stop()
  loadStopped = true

  // Every acknowledged write is in PostgreSQL, once.
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  teardown(() => client.end())
  const { rows } = await client.query<{ title: string; count: number }>(
    `select title, count(*)::int as count from tasks where title like $1 group by title`,
    [`fleet ${run}-%`],
  )
  const found = new Map(rows.map((row) => [row.title.slice('fleet '.length), row.count]))
  const writes = load.writes.filter((w) => w.outcome !== undefined)
  const acknowledged = writes.filter((w) => w.outcome === 'acknowledged')
  const failed = writes.filter((w) => w.outcome === 'failed')
  const shed = writes.filter((w) => w.outcome === 'shed')
  t.same(acknowledged.filter((w) => !found.has(w.id)), [], 'every acknowledged write is in PostgreSQL')
  t.same(rows.filter((row) => row.count !== 1), [], 'no write is applied twice')
  t.same(shed.filter((w) => found.has(w.id)), [], 'no shed write was applied')
  // A write sent just before the kill and in flight on b fails during the kill: its answer came back then.
  t.same(
    failed.filter((w) => w.endPhase !== 'sigkill'),
    [],
    'writes failed only in flight on the killed instance',
  )
  const appliedNotAcknowledged = failed.filter((w) => found.has(w.id)).length
  t.equal(found.size, acknowledged.length + appliedNotAcknowledged, 'the database holds the acknowledged writes and the failed ones it committed, nothing else')

  // A rate limit of RATE_LIMIT per window across the fleet: one key, requests spread over a, b (c is out).
  const key = `limited-${run}`
  const answers: { status: number; server: string | null; body: unknown }[] = []
  for (let i = 0; i < 3 * RATE_LIMIT; i++) {
    const response = await fetch(`${balancer}/api/services`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ intent: 'execute', service: 'greetings', action: 'hello', payload: { name: 'fleet' } }),
    })
    answers.push({ status: response.status, server: response.headers.get('x-fleet-server'), body: await response.json() })
  }
  const allowed = answers.filter((answer) => answer.status === 200)
  const limited = answers.filter((answer) => answer.status === 429)
  t.equal(allowed.length, RATE_LIMIT, `exactly ${RATE_LIMIT} of ${answers.length} requests allowed across the fleet`)
  t.equal(limited.length, answers.length - RATE_LIMIT, 'the rest answered 429')
  t.same(new Set(allowed.map((answer) => answer.server)), new Set(['a', 'b']), 'the allowed ones spread over both instances in rotation')
  t.same(new Set(limited.map((answer) => answer.server)), new Set(['a', 'b']), 'and both refuse once the shared budget is spent')
  for (const answer of limited) t.match(answer.body, { status: false, message: /^Rate limit exceeded, retry in \d+ seconds$/, data: {} })

  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  const byPhase = (phase: string) => writes.filter((w) => w.phase === phase)
  const figures = [
    `writes sent ${writes.length}, acknowledged ${acknowledged.length}, failed ${failed.length}, shed ${shed.length}, found in PostgreSQL ${found.size} (applied but not acknowledged ${appliedNotAcknowledged}, applied twice 0)`,
    `while a drained after SIGTERM: ${sigterm.length} sent, ${sigterm.filter((w) => w.outcome !== 'acknowledged').length} failed`,
    `after SIGKILL of b: ${byPhase('sigkill').length} sent, ${writes.filter((w) => w.endPhase === 'sigkill' && w.outcome === 'failed').length} failed`,
    `while c restarted shedding load: ${byPhase('shedding c').length} sent, ${byPhase('shedding c').filter((w) => w.outcome === 'shed').length} shed by c; with c out of rotation: ${whileShedding.length} sent, 0 failed`,
    `rate limit ${RATE_LIMIT} per window, ${answers.length} requests with one key through the balancer: ${allowed.length} allowed, ${limited.length} refused`,
    `test time ${seconds} s`,
  ]
  for (const line of figures) t.comment(line)
  const failures = failed.map((w) => `${w.phase} ${w.server ?? '-'} ${w.detail}`)
  if (failures.length) t.comment(`failed writes: ${failures.slice(0, 10).join('; ')}`)
})
