import t from 'tap'
import { createHmac } from 'node:crypto'
import { messages, type LogEntry, type ServiceLogger } from '../../lib/index.js'
import { openDatabase, setupDatabase, type Db } from '../../example/db.js'
import { signInRequired, taskService } from '../../example/services/tasks.js'
import { buildServer, execute } from '../helpers/server.js'
import { openPostgres, postgresSkipReason, type TapTest } from '../helpers/postgres.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const MISSING_ID = '00000000-0000-4000-8000-000000000000'
const SECRET = 'example-secret'
const executed = (action: string) => messages.executed('tasks', action)

function token(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  const unsigned = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ iat: Math.floor(Date.now() / 1000), ...claims })}`
  return `${unsigned}.${createHmac('sha256', SECRET).update(unsigned).digest('base64url')}`
}

function recordingLogger() {
  const entries: LogEntry[] = []
  const write = (entry: LogEntry) => `log-${entries.push(entry)}`
  const logger: ServiceLogger = { info: write, warn: write, error: write }
  return { logger, entries }
}

/** The tasks service of `npm start`, over HTTP, on one database. */
async function exampleSuite(t: TapTest, db: Db) {
  const { logger, entries } = recordingLogger()
  const server = await buildServer({
    services: [taskService],
    resources: { database: db, logger },
    onBoot: { fn: () => setupDatabase(db) },
  })
  t.teardown(() => server.close())
  const { app } = server
  // The example declares NOT_FOUND (404) on the actions that name one task; the message keeps the model's log id.
  const notFound = (id: string) => ({ status: false, message: `[log-${entries.length}] ${messages.notFound('task')}`, data: { code: 'NOT_FOUND', id } })

  t.test('the setup step is idempotent', async (t) => {
    t.same(await setupDatabase(db), { ok: true, value: null }, 'onBoot ran it once already')
  })

  let id = ''
  t.test('create', async (t) => {
    const created = await execute(app, 'tasks', 'create', { title: 'Buy milk', notes: '2 litres' })
    t.equal(created.statusCode, 200)
    t.match(created.body, { data: { id: UUID, createdAt: ISO } })
    id = created.body.data.id
    t.same(created.body, {
      status: true,
      message: executed('create'),
      data: { id, title: 'Buy milk', notes: '2 litres', done: false, ownerId: null, createdAt: created.body.data.createdAt },
    })

    for (const payload of [{}, { title: 'x'.repeat(201) }, { title: 'x', ownerId: 'me' }, { title: 'x', done: 'yes' }]) {
      const refused = await execute(app, 'tasks', 'create', payload)
      t.equal(refused.statusCode, 400)
      t.match(refused.body, { status: false, message: messages.validationFailed, data: { errors: [{ path: String }] } })
    }
  })

  t.test('get', async (t) => {
    const found = await execute(app, 'tasks', 'get', { id })
    t.equal(found.statusCode, 200)
    t.same(found.body, {
      status: true,
      message: executed('get'),
      data: { id, title: 'Buy milk', notes: '2 litres', done: false, ownerId: null, createdAt: found.body.data.createdAt },
    })
    const missing = await execute(app, 'tasks', 'get', { id: MISSING_ID })
    t.equal(missing.statusCode, 404)
    t.same(missing.body, notFound(MISSING_ID), 'the log id, then the message; the declared code and the id')
    t.match(entries.at(-1), { atFunction: 'task.findById', message: messages.notFound('task'), data: { id: MISSING_ID } })
    const malformed = await execute(app, 'tasks', 'get', { id: 'abc' })
    t.equal(malformed.statusCode, 400)
    t.same(malformed.body, { status: false, message: messages.validationFailed, data: { errors: [{ path: '/id', message: 'must match format "uuid"' }] } })
  })

  t.test('list, offset and cursor', async (t) => {
    await execute(app, 'tasks', 'create', { title: 'Second' })
    const all = await execute(app, 'tasks', 'list', {})
    t.equal(all.statusCode, 200)
    t.match(all.body, { status: true, message: executed('list'), data: { total: 2, hasMore: false } })
    t.same(all.body.data.items.map((task: { title: string }) => task.title), ['Second', 'Buy milk'], 'newest first')
    const page = await execute(app, 'tasks', 'list', { limit: 1, offset: 1 })
    t.same(page.body.data.items.map((task: { title: string }) => task.title), ['Buy milk'])
    t.same([page.body.data.total, page.body.data.hasMore], [2, false])
    const first = await execute(app, 'tasks', 'list', { cursor: '', limit: 1 })
    t.match(first.body, { status: true, data: { items: [{}], nextCursor: UUID, hasMore: true } })
    const next = await execute(app, 'tasks', 'list', { cursor: first.body.data.nextCursor, limit: 1 })
    t.match(next.body, { status: true, data: { items: [{}], nextCursor: null, hasMore: false } })
    t.not(next.body.data.items[0].id, first.body.data.items[0].id)
    for (const payload of [{ limit: 0 }, { limit: 101 }, { offset: -1 }, { page: 2 }]) {
      const refused = await execute(app, 'tasks', 'list', payload)
      t.equal(refused.statusCode, 400)
      t.match(refused.body, { status: false, message: messages.validationFailed })
    }
  })

  t.test('update', async (t) => {
    const changed = await execute(app, 'tasks', 'update', { id, data: { done: true, notes: null } })
    t.equal(changed.statusCode, 200)
    t.match(changed.body, { status: true, message: executed('update'), data: { id, title: 'Buy milk', notes: null, done: true } })
    const empty = await execute(app, 'tasks', 'update', { id, data: {} })
    t.equal(empty.statusCode, 400)
    t.match(empty.body, { status: false, message: messages.validationFailed })
    const missing = await execute(app, 'tasks', 'update', { id: MISSING_ID, data: { done: true } })
    t.equal(missing.statusCode, 404)
    t.same(missing.body, notFound(MISSING_ID))
  })

  t.test('delete', async (t) => {
    const deleted = await execute(app, 'tasks', 'delete', { id })
    t.equal(deleted.statusCode, 200)
    t.match(deleted.body, { status: true, message: executed('delete'), data: { id, title: 'Buy milk' } })
    const again = await execute(app, 'tasks', 'delete', { id })
    t.equal(again.statusCode, 404)
    t.same(again.body, notFound(id))
    const gone = await execute(app, 'tasks', 'get', { id })
    t.same(gone.body, notFound(id))
  })

  t.test('claim and mine: protected; without auth configured they ask for a signed-in user', async (t) => {
    for (const action of ['mine', 'claim']) {
      const answer = await execute(app, 'tasks', action, action === 'claim' ? { id: MISSING_ID } : {})
      t.equal(answer.statusCode, 400)
      t.same(answer.body, { status: false, message: signInRequired, data: {} })
    }
  })

  t.test('claim and mine with a JWT', async (t) => {
    const secured = await buildServer({ services: [taskService], resources: { database: db, logger }, auth: { secret: SECRET } })
    t.teardown(() => secured.close())
    const created = await execute(secured.app, 'tasks', 'create', { title: 'Mine' })
    const headers = { authorization: `Bearer ${token({ sub: 'user-1' })}` }
    const claimed = await execute(secured.app, 'tasks', 'claim', { id: created.body.data.id }, { headers })
    t.equal(claimed.statusCode, 200)
    t.match(claimed.body, { status: true, message: executed('claim'), data: { id: created.body.data.id, ownerId: 'user-1' } })
    const mine = await execute(secured.app, 'tasks', 'mine', {}, { headers })
    t.equal(mine.statusCode, 200)
    t.match(mine.body, { status: true, message: executed('mine'), data: { userId: 'user-1' } })
    t.same(mine.body.data.items.map((task: { title: string }) => task.title), ['Mine'])
    const anonymous = await execute(secured.app, 'tasks', 'mine', {})
    t.equal(anonymous.statusCode, 401)
    t.same(anonymous.body, { status: false, message: messages.authFailed(messages.authReasons.missingToken), data: {} })
  })
}

t.test('openDatabase: DATABASE_URL selects PostgreSQL and never prints the password', async (t) => {
  const database = await openDatabase({ DATABASE_URL: 'postgres://app:hunter2@127.0.0.1:1/tasks' })
  t.equal(database.description, 'PostgreSQL at 127.0.0.1:1/tasks')
  await database.close()
})

t.test('on PGlite (openDatabase, in memory)', async (t) => {
  const database = await openDatabase({ PGLITE_DIR: 'memory://' })
  t.teardown(() => database.close())
  t.equal(database.description, 'PGlite in memory://')
  await exampleSuite(t, database.db)
})

const skip = postgresSkipReason()
t.test('on PostgreSQL', skip ? { skip } : {}, async (t) => {
  const database = await openPostgres()
  t.teardown(() => database.close())
  await exampleSuite(t, database.db)
})
