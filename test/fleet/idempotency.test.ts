/**
 * Issue 43, the fleet: idempotency keys held in one Redis by three instances behind HAProxy (the
 * configuration docs/deployment.md shows), a charge's effects in PostgreSQL. Run counts are read
 * from the database, never inferred from answers:
 * - the same key sent to two instances at once: one runs it, the other answers 409 (in flight);
 *   afterwards the key replays the stored answer; one attempt, one charge;
 * - the instance running a charge is SIGKILLed before it answers (the client gets HAProxy's 502):
 *   the dead instance never stored an answer, so once its lease ends a retry with the same key runs
 *   on another instance, once; two attempts (the killed one and the retry), one charge.
 * The handler waits while a Redis "gate" key exists, so what is in flight is decided by the test,
 * not by timing.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import pg from 'pg'
import t from 'tap'
import { messages } from '../../lib/index.js'
import { fleetSkipReason, haproxyBin, killInstances, provideDatabase, sleep, startBalancer, startInstance, stopProcess, waitFor, type Instance } from '../helpers/fleet.js'
import { freePort, startRedis } from '../helpers/redis.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const script = join(root, 'test', 'fleet', 'fixtures', 'payments-server.ts')
/** How long a running request holds its key: the retry after a SIGKILL waits this long at most. */
const LEASE_MS = 5000

t.setTimeout(240_000)
const haproxy = haproxyBin()
const skip = fleetSkipReason()

interface Answer {
  status: number
  server: string | null
  replayed: string | null
  body: { status: boolean; message: string; data: Record<string, unknown> } | string
}

t.test('idempotency keys across a fleet: two instances at once run a key once; a retry after a SIGKILL runs once', { skip }, async (t) => {
  const cleanups: (() => unknown)[] = []
  const teardown = (fn: () => unknown) => cleanups.push(fn)
  t.teardown(async () => {
    for (const fn of cleanups.reverse()) await Promise.resolve().then(fn).catch((error) => t.comment(`teardown: ${error}`))
  })
  const dir = mkdtempSync(join(tmpdir(), 'fastify-actions-fleet-idempotency-'))
  teardown(() => rmSync(dir, { recursive: true, force: true }))
  const [database, redisServer] = await Promise.all([provideDatabase('payments'), startRedis()])
  teardown(() => database.stop())
  teardown(() => redisServer.stop())
  const db = new pg.Client({ connectionString: database.url })
  await db.connect()
  teardown(() => db.end())
  await db.query('create table attempts (id serial primary key, order_id text not null, instance text not null)')
  await db.query('create table charges (id serial primary key, order_id text not null, amount integer not null, instance text not null)')
  const gates = new Redis(`redis://127.0.0.1:${redisServer.port}`, { maxRetriesPerRequest: 1 })
  teardown(() => gates.quit())

  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: database.url, REDIS_URL: `redis://127.0.0.1:${redisServer.port}`, IDEMPOTENCY_LEASE_MS: String(LEASE_MS) }
  delete env.NODE_OPTIONS
  teardown(() => killInstances())
  const ports: Record<string, number> = { a: await freePort(), b: await freePort(), c: await freePort() }
  const instances: Record<string, Instance> = {}
  for (const instance of await Promise.all(Object.entries(ports).map(([name, port]) => startInstance(script, name, port, { ...env, INSTANCE: name }, root)))) {
    instances[instance.name] = instance
  }
  const front = await startBalancer(haproxy!, dir, ports)
  teardown(() => stopProcess(front.process, 'SIGUSR1'))
  for (const name of Object.keys(ports)) await front.stateIs(name, 'UP')

  const charge = async (key: string, orderId: string): Promise<Answer> => {
    const response = await fetch(`${front.url}/api/services`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ intent: 'execute', service: 'payments', action: 'charge', payload: { orderId, amount: 1250 } }),
      signal: AbortSignal.timeout(60_000),
    })
    const text = await response.text()
    let body: Answer['body'] = text
    try {
      body = JSON.parse(text)
    } catch {
      // HAProxy's own error pages (502) are HTML.
    }
    return { status: response.status, server: response.headers.get('x-fleet-server'), replayed: response.headers.get('idempotent-replayed'), body }
  }
  const rows = async (table: 'attempts' | 'charges', orderId: string) =>
    (await db.query<{ instance: string }>(`select instance from ${table} where order_id = $1 order by id`, [orderId])).rows.map((row) => row.instance)

  await t.test('the same key to two instances at once runs once', async (t) => {
    await gates.set('gate:order-1', 'held')
    const both = [charge('key-order-1', 'order-1'), charge('key-order-1', 'order-1')]
    const first = await Promise.race(both)
    t.equal(first.status, 409, 'the one that came second is refused while the first runs')
    t.same(first.body, { status: false, message: messages.idempotencyInFlight, data: {} })
    await gates.del('gate:order-1')
    const [one, two] = await Promise.all(both)
    const ran = one.status === 200 ? one : two
    t.equal(ran.status, 200, 'the other ran it')
    t.not(one.server, two.server, `two instances answered (${one.server}, ${two.server})`)
    t.match(ran.body, { status: true, message: messages.executed('payments', 'charge'), data: { orderId: 'order-1', amount: 1250, instance: ran.server } })
    t.same(await rows('attempts', 'order-1'), [ran.server], 'the handler started once')
    t.same(await rows('charges', 'order-1'), [ran.server], 'one charge')

    // Every instance replays the stored answer: three more through the round robin.
    for (let i = 0; i < 3; i++) {
      const again = await charge('key-order-1', 'order-1')
      t.equal(again.status, 200)
      t.equal(again.replayed, 'true', `replayed by ${again.server}`)
      t.same(again.body, ran.body, 'the stored answer, byte for byte the same envelope')
    }
    t.same(await rows('charges', 'order-1'), [ran.server], 'still one charge')
  })

  await t.test('the instance running a charge is killed before it answers: the retry elsewhere runs it once', async (t) => {
    await gates.set('gate:order-2', 'held')
    // The answer is lost either way: HAProxy answers 502 or closes the connection (the server went away mid-request).
    const lost = charge('key-order-2', 'order-2').catch((error: unknown) => ({ status: 0, server: null, replayed: null, body: String(error) }) satisfies Answer)
    let victim = ''
    await waitFor('the charge to start', async () => (victim = (await rows('attempts', 'order-2'))[0] ?? '') !== '')
    await waitFor(`${victim} to log the charge`, () => instances[victim].output().includes('charging order-2'), instances[victim].output)
    await stopProcess(instances[victim].child, 'SIGKILL')
    const answer = await lost
    t.ok(answer.status === 502 || answer.status === 0, `the client lost the answer (${answer.status === 0 ? 'connection closed' : "HAProxy's 502"}; the request had been sent to ${victim})`)
    await gates.del('gate:order-2')
    await front.stateIs(victim, 'DOWN')

    // A client retrying with the same key: 409 while the dead instance's lease holds it, then it runs once.
    const started = Date.now()
    let retried: Answer
    let inFlight = 0
    for (;;) {
      retried = await charge('key-order-2', 'order-2')
      if (retried.status !== 409) break
      inFlight++
      if (Date.now() - started > LEASE_MS + 30_000) throw new Error('the key was never freed')
      await sleep(250)
    }
    t.equal(retried.status, 200, `the retry ran (after ${inFlight} answers of 409 while the lease held)`)
    t.equal(retried.replayed, null, 'not a replay: the killed instance never stored an answer')
    t.not(retried.server, victim)
    t.match(retried.body, { status: true, data: { orderId: 'order-2', amount: 1250, instance: retried.server } })
    t.same(await rows('attempts', 'order-2'), [victim, retried.server], 'two attempts: the killed one and the retry')
    t.same(await rows('charges', 'order-2'), [retried.server], 'one charge')
    const again = await charge('key-order-2', 'order-2')
    t.equal(again.replayed, 'true')
    t.same(again.body, retried.body)
    t.same(await rows('charges', 'order-2'), [retried.server], 'still one charge')
  })
})
