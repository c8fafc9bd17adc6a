import t from 'tap'
import { relations } from 'drizzle-orm'
import { date, integer, pgEnum, pgTable, serial, text, timestamp, uuid, varchar } from 'drizzle-orm/pg-core'
import {
  createModel,
  createTransactionVariant,
  Err,
  messages,
  Ok,
  type DBX,
  type LogEntry,
  type Result,
  type ServiceLogger,
} from '../../lib/index.js'
import { buildServer } from '../helpers/server.js'
import { onBothDatabases, type TapTest, type TestDatabase } from '../helpers/postgres.js'

const taskStatus = pgEnum('task_status', ['open', 'done'])
const tasks = pgTable('tasks', {
  id: uuid('id').primaryKey().defaultRandom(),
  title: varchar('title', { length: 100 }).notNull(),
  status: taskStatus('status').notNull().default('open'),
  points: integer('points'),
  dueAt: timestamp('due_at', { withTimezone: true, precision: 3 }),
  dueDay: date('due_day', { mode: 'date' }),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
})
/** No created column, a serial id. */
const notes = pgTable('notes', { id: serial('id').primaryKey(), body: text('body').notNull() })
/** A trigger drops every insert: INSERT … RETURNING answers no row. */
const drafts = pgTable('drafts', { id: uuid('id').primaryKey().defaultRandom(), title: text('title').notNull() })

const setup = `
  CREATE TYPE task_status AS ENUM ('open', 'done');
  CREATE TABLE tasks (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    title varchar(100) NOT NULL,
    status task_status NOT NULL DEFAULT 'open',
    points integer,
    due_at timestamptz(3),
    due_day date,
    created_at timestamptz(3) NOT NULL DEFAULT now()
  );
  CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL);
  CREATE TABLE drafts (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), title text NOT NULL);
  CREATE FUNCTION skip_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
  CREATE TRIGGER drafts_skip BEFORE INSERT ON drafts FOR EACH ROW EXECUTE FUNCTION skip_row();
`

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const MISSING_ID = '00000000-0000-4000-8000-000000000000'

function recordingLogger() {
  const entries: Array<LogEntry & { level: string }> = []
  const write = (level: string) => (entry: LogEntry) => {
    entries.push({ level, ...entry })
    return `log-${entries.length}`
  }
  const logger: ServiceLogger = { info: write('info'), warn: write('warn'), error: write('error') }
  return { logger, entries }
}

type Logs = ReturnType<typeof recordingLogger> | undefined

/**
 * Asserts the Err a model call answers: the plain message without a logger; with one, the
 * message behind the log id, and one error entry logged with that `atFunction`. Returns the entry.
 */
async function expectErr(t: TapTest, logs: Logs, call: () => Promise<Result<unknown, string>>, message: string, atFunction: string) {
  const before = logs?.entries.length ?? 0
  const result = await call()
  if (!logs) {
    t.same(result, Err(message), message)
    return undefined
  }
  t.same(result, Err(`[log-${before + 1}] ${message}`), `[log id] ${message}`)
  t.equal(logs.entries.length, before + 1, 'one entry logged')
  const entry = logs.entries[before]
  t.match(entry, { level: 'error', atFunction, message })
  return entry
}

function value<T>(result: Result<T, string>): T {
  if (!result.ok) throw new Error(`expected Ok, got Err: ${result.error}`)
  return result.value
}

/** The whole model contract, on one database, with or without a logger in the context. */
async function modelSuite(t: TapTest, database: TestDatabase, logs: Logs) {
  const { db } = database
  const server = await buildServer({ rest: false, resources: logs ? { database: db, logger: logs.logger } : { database: db } })
  t.teardown(() => server.close())
  const task = createModel(tasks, { name: 'task' })
  const note = createModel(notes, { name: 'note' })
  const reset = () => database.exec('TRUNCATE tasks, notes RESTART IDENTITY')

  t.test('exposes the table and its schemas', async (t) => {
    t.equal(task.table, tasks)
    t.same(Object.keys(task.schemas).sort(), ['insert', 'select', 'update'])
    t.same(Object.keys(task.schemas.select.properties), ['id', 'title', 'status', 'points', 'dueAt', 'dueDay', 'createdAt'])
  })

  t.test('create', async (t) => {
    await reset()
    const row = value(await task.create({ data: { title: 'Write docs' } }))
    t.match(row, { id: UUID, title: 'Write docs', status: 'open', points: null, dueAt: null, dueDay: null })
    t.type(row.createdAt, Date)
    const iso = value(await task.create({ data: { title: 'ISO due', dueAt: '2030-01-02T03:04:05.678Z', points: 3 } }))
    t.same(iso.dueAt, new Date('2030-01-02T03:04:05.678Z'))
    t.equal(iso.points, 3)
    const date = value(await task.create({ data: { title: 'Date due', dueAt: new Date('2031-05-06T00:00:00.000Z'), points: undefined } }))
    t.same([date.dueAt, date.points], [new Date('2031-05-06T00:00:00.000Z'), null], 'a Date works; undefined keys are left out')
    t.same(value(await task.findAll()).length, 3)
    const day = new Date('2030-02-03T00:00:00.000Z')
    t.same(value(await task.create({ data: { title: 'Day string', dueDay: '2030-02-03' } })).dueDay, day, 'a date column takes YYYY-MM-DD')
    t.same(value(await task.create({ data: { title: 'Day Date', dueDay: day } })).dueDay, day, 'or a Date')

    const invalid = await expectErr(t, logs, () => task.create({ data: { title: '', points: 1.5 } as never }), messages.invalidData('task'), 'task.create')
    if (invalid) {
      const paths = (invalid.data as { errors: Array<{ path: string }> }).errors.map((error) => error.path)
      t.ok(paths.includes('/points'), 'the details stay in the log: data.errors')
    }
    await expectErr(t, logs, () => task.create({ data: {} as never }), messages.invalidData('task'), 'task.create')
    await expectErr(t, logs, () => task.create({ data: { title: 'x', status: 'closed' } as never }), messages.invalidData('task'), 'task.create')
    await expectErr(t, logs, () => task.create({ data: { title: 'x'.repeat(101) } }), messages.invalidData('task'), 'task.create')
    await expectErr(t, logs, () => task.create({ data: { title: 'x', dueAt: 'tomorrow' } }), messages.invalidData('task'), 'task.create')
    await expectErr(t, logs, () => task.create({ data: { title: 'x', dueAt: new Date('nope') } }), messages.invalidData('task'), 'task.create')
    await expectErr(t, logs, () => task.create({ data: { title: 'x', colour: 'red' } as never }), messages.invalidData('task'), 'task.create')
    await expectErr(t, logs, () => task.create({ data: null as never }), messages.invalidData('task'), 'task.create')
    await expectErr(t, logs, () => task.create({ data: { title: 'x', points: 2 ** 31 } }), messages.invalidData('task'), 'task.create')
    t.equal(value(await task.findAll()).length, 5, 'nothing invalid was written')

    // A database error: the driver's text, without the SQL; code, query and params in the log.
    const duplicate = await expectErr(
      t,
      logs,
      () => task.create({ data: { id: row.id, title: 'again' } }),
      'duplicate key value violates unique constraint "tasks_pkey"',
      'task.create',
    )
    if (duplicate) t.match(duplicate.data, { code: '23505', query: /^insert into "tasks"/, params: Array })
  })

  t.test('create answers `<Name> creation returned no data` when the insert returns no row', async (t) => {
    const draft = createModel(drafts, { name: 'draft' })
    await expectErr(t, logs, () => draft.create({ data: { title: 'dropped by a trigger' } }), messages.creationNoData('draft'), 'draft.create')
    t.equal(messages.creationNoData('draft'), 'Draft creation returned no data')
  })

  t.test('findById', async (t) => {
    await reset()
    const row = value(await task.create({ data: { title: 'Find me' } }))
    t.same(await task.findById(row.id), Ok(row))
    await expectErr(t, logs, () => task.findById(MISSING_ID), messages.notFound('task'), 'task.findById')
    // An id the column could never hold is not found either, without a database error.
    await expectErr(t, logs, () => task.findById('not-a-uuid'), messages.notFound('task'), 'task.findById')
    t.equal(messages.notFound('task'), 'Task not found')
    const first = value(await note.create({ data: { body: 'one' } }))
    t.same(await note.findById(first.id), Ok({ id: 1, body: 'one' }))
    t.same(await note.findById('1'), Ok({ id: 1, body: 'one' }), 'a numeric string finds a serial id')
    await expectErr(t, logs, () => note.findById('1.5'), messages.notFound('note'), 'note.findById')
    await expectErr(t, logs, () => note.findById(2 ** 31), messages.notFound('note'), 'note.findById')
  })

  t.test('update', async (t) => {
    await reset()
    const row = value(await task.create({ data: { title: 'Old' } }))
    const updated = value(await task.update({ id: row.id, data: { title: 'New', status: 'done' } }))
    t.same(updated, { ...row, title: 'New', status: 'done' })
    t.same(value(await task.update({ id: row.id, data: { points: null, dueAt: '2030-01-01T00:00:00Z' } })).dueAt, new Date('2030-01-01T00:00:00Z'))
    t.same(await task.findById(row.id), Ok({ ...updated, dueAt: new Date('2030-01-01T00:00:00Z') }))

    await expectErr(t, logs, () => task.update({ id: MISSING_ID, data: { title: 'x' } }), messages.notFound('task'), 'task.update')
    await expectErr(t, logs, () => task.update({ id: 'nope', data: { title: 'x' } }), messages.notFound('task'), 'task.update')
    await expectErr(t, logs, () => task.update({ id: row.id, data: {} }), messages.invalidData('task'), 'task.update')
    await expectErr(t, logs, () => task.update({ id: row.id, data: { title: null } as never }), messages.invalidData('task'), 'task.update')
    await expectErr(t, logs, () => task.update({ id: row.id, data: { titel: 'typo' } as never }), messages.invalidData('task'), 'task.update')
    // Validation comes first: invalid data for a missing row is invalid data.
    await expectErr(t, logs, () => task.update({ id: MISSING_ID, data: { status: 'closed' } as never }), messages.invalidData('task'), 'task.update')
  })

  t.test('delete', async (t) => {
    await reset()
    const row = value(await task.create({ data: { title: 'Delete me' } }))
    const keep = value(await task.create({ data: { title: 'Keep me' } }))
    t.same(await task.delete(row.id), Ok(row))
    await expectErr(t, logs, () => task.findById(row.id), messages.notFound('task'), 'task.findById')
    await expectErr(t, logs, () => task.delete(row.id), messages.notFound('task'), 'task.delete')
    await expectErr(t, logs, () => task.delete('nope'), messages.notFound('task'), 'task.delete')
    t.same(await task.findAll(), Ok([keep]))
  })

  t.test('findAll', async (t) => {
    await reset()
    t.same(await task.findAll(), Ok([]))
    const at = (minute: number) => new Date(Date.UTC(2030, 0, 1, 0, minute))
    const middle = value(await task.create({ data: { title: 'middle', createdAt: at(2) } }))
    const newest = value(await task.create({ data: { title: 'newest', createdAt: at(3) } }))
    const oldest = value(await task.create({ data: { title: 'oldest', createdAt: at(1) } }))
    t.same(await task.findAll(), Ok([newest, middle, oldest]), 'ordered by createdAt, newest first')
    for (const body of ['a', 'b', 'c']) await note.create({ data: { body } })
    const rows = value(await note.findAll())
    t.same(rows.map((row) => row.body).sort(), ['a', 'b', 'c'], 'no created column: every row')
  })

  t.test('findPaginated, offset mode', async (t) => {
    await reset()
    t.same(await note.findPaginated(), Ok({ items: [], total: 0, hasMore: false }))
    for (let i = 1; i <= 55; i++) await note.create({ data: { body: `note ${i}` } })
    const first = value(await note.findPaginated())
    t.equal(first.items.length, 50, 'limit 50 by default')
    t.equal(first.total, 55)
    t.equal(first.hasMore, true)
    t.same(first.items.slice(0, 2).map((row) => row.id), [55, 54], 'offset 0 by default; newest id first')
    t.same(value(await note.findPaginated({ offset: 50 })), {
      items: [5, 4, 3, 2, 1].map((id) => ({ id, body: `note ${id}` })),
      total: 55,
      hasMore: false,
    })
    t.same(value(await note.findPaginated({ limit: 2, offset: 52 })).items.map((row) => row.id), [3, 2])
    t.equal(value(await note.findPaginated({ limit: 2, offset: 52 })).hasMore, true)
    t.equal(value(await note.findPaginated({ limit: 2, offset: 53 })).hasMore, false)
    t.same(value(await note.findPaginated({ offset: 100 })), { items: [], total: 55, hasMore: false })

    const at = (minute: number) => new Date(Date.UTC(2030, 0, 1, 0, minute))
    const older = value(await task.create({ data: { title: 'older', createdAt: at(1) } }))
    const newer = value(await task.create({ data: { title: 'newer', createdAt: at(2) } }))
    t.same(await task.findPaginated({ limit: 1 }), Ok({ items: [newer], total: 2, hasMore: true }), 'ordered by createdAt, newest first')
    t.same(await task.findPaginated({ limit: 1, offset: 1 }), Ok({ items: [older], total: 2, hasMore: false }))

    for (const bad of [{ limit: 0 }, { limit: -1 }, { limit: 1.5 }, { offset: -1 }, { offset: 0.5 }, { limit: '5' as never }]) {
      await expectErr(t, logs, () => note.findPaginated(bad), messages.invalidPagination, 'note.findPaginated')
    }
  })

  t.test('findPaginated, cursor mode', async (t) => {
    await reset()
    for (let i = 1; i <= 55; i++) await note.create({ data: { body: `note ${i}` } })
    const top = value(await note.findPaginated({ cursor: '' }))
    t.equal(top.items.length, 50, 'limit 50 by default; an empty cursor is the first page')
    t.same([top.items[0].id, top.items[49].id, top.nextCursor, top.hasMore], [55, 6, '6', true])
    t.same(value(await note.findPaginated({ cursor: '6' })), {
      items: [5, 4, 3, 2, 1].map((id) => ({ id, body: `note ${id}` })),
      nextCursor: null,
      hasMore: false,
    })
    t.same(value(await note.findPaginated({ cursor: '3', limit: 2 })), {
      items: [2, 1].map((id) => ({ id, body: `note ${id}` })),
      nextCursor: null,
      hasMore: false,
    }, 'exactly limit rows left: no more')
    // Walking the pages visits every row once, in descending order.
    const seen: number[] = []
    let cursor = ''
    for (let page = 0; page < 20; page++) {
      const result = value(await note.findPaginated({ cursor, limit: 7 }))
      seen.push(...result.items.map((row) => row.id))
      if (!result.hasMore) break
      t.equal(result.items.length, 7)
      cursor = result.nextCursor as string
    }
    t.same(seen, Array.from({ length: 55 }, (_, i) => 55 - i))

    const at = (minute: number) => new Date(Date.UTC(2030, 0, 1, 0, minute))
    const rows = []
    for (const minute of [1, 2, 3]) rows.push(value(await task.create({ data: { title: `t${minute}`, createdAt: at(minute) } })))
    const byDate = value(await task.findPaginated({ cursor: '', cursorColumn: 'createdAt', limit: 2 }))
    t.same(byDate, { items: [rows[2], rows[1]], nextCursor: at(2).toISOString(), hasMore: true }, 'a Date cursor is an ISO string')
    t.same(value(await task.findPaginated({ cursor: byDate.nextCursor as string, cursorColumn: 'createdAt', limit: 2 })), {
      items: [rows[0]],
      nextCursor: null,
      hasMore: false,
    })

    await expectErr(t, logs, () => task.findPaginated({ cursor: '', cursorColumn: 'nope' }), messages.unknownCursorColumn('nope', 'task'), 'task.findPaginated')
    t.equal(messages.unknownCursorColumn('nope', 'task'), "Cursor column 'nope' does not exist on task table")
    const misconfigured = createModel(tasks, { name: 'task', cursorColumn: 'rank' })
    await expectErr(t, logs, () => misconfigured.findPaginated({ cursor: '' }), messages.unknownCursorColumn('rank', 'task'), 'task.findPaginated')
    const byTitle = createModel(tasks, { name: 'task', cursorColumn: 'title' })
    t.same(value(await byTitle.findPaginated({ cursor: 't3' })).items.map((row) => row.title), ['t2', 't1'], 'the model default cursorColumn')
    await expectErr(t, logs, () => note.findPaginated({ cursor: 'abc' }), messages.invalidPagination, 'note.findPaginated')
    await expectErr(t, logs, () => task.findPaginated({ cursor: 'not a date', cursorColumn: 'createdAt' }), messages.invalidPagination, 'task.findPaginated')
    await expectErr(t, logs, () => note.findPaginated({ cursor: '', limit: 0 }), messages.invalidPagination, 'note.findPaginated')
  })

  t.test('createTx and updateTx', async (t) => {
    await reset()
    const row = value(await task.createTx({ data: { title: 'In a transaction' } }))
    t.same(await task.findById(row.id), Ok(row), 'committed')
    await expectErr(t, logs, () => task.createTx({ data: { title: 'x', points: 'five' } as never }), messages.invalidData('task'), 'task.create')
    t.same(value(await task.updateTx({ id: row.id, data: { status: 'done' } })).status, 'done')
    await expectErr(t, logs, () => task.updateTx({ id: MISSING_ID, data: { status: 'done' } }), messages.notFound('task'), 'task.update')

    // Inside an outer transaction they nest as savepoints: the outer Err undoes them too.
    const outer = createTransactionVariant(async ({ dbx }: { dbx?: DBX }) => {
      const created = value(await task.createTx({ data: { title: 'rolled back' }, dbx }))
      t.same(await task.findById(created.id, dbx), Ok(created), 'visible inside the transaction')
      t.same(value(await task.findAll(dbx)).length, 2)
      t.same(value(await task.findPaginated({ dbx })).total, 2)
      t.same(await task.delete(row.id, dbx), Ok({ ...row, status: 'done' }))
      return Err('undo everything')
    })
    t.same(await outer({ dbx: db }), Err('undo everything'))
    t.same(value(await task.findAll()).map((found) => found.title), ['In a transaction'], 'both undone')
  })

  t.test('without a database it throws createModel: No database available.', async (t) => {
    const bare = await buildServer({ rest: false, resources: logs ? { logger: logs.logger } : {} })
    t.teardown(() => bare.close())
    const noDatabase = { message: 'createModel: No database available.', code: 'FA_ERR_NO_DATABASE' }
    await t.rejects(task.create({ data: { title: 'x' } }), noDatabase)
    await t.rejects(task.createTx({ data: { title: 'x' } }), noDatabase)
    await t.rejects(task.findById(MISSING_ID), noDatabase)
    await t.rejects(task.update({ id: MISSING_ID, data: { title: 'x' } }), noDatabase)
    await t.rejects(task.updateTx({ id: MISSING_ID, data: { title: 'x' } }), noDatabase)
    await t.rejects(task.delete(MISSING_ID), noDatabase)
    await t.rejects(task.findAll(), noDatabase)
    await t.rejects(task.findPaginated(), noDatabase)
    // An explicit database works without one in the context, and so does a dbx.
    const own = createModel(tasks, { name: 'task', db })
    t.ok(value(await own.findAll()))
    t.ok(value(await task.findAll(db)))
    const notADatabase = await buildServer({ rest: false, resources: { database: { select: () => {} } } })
    t.teardown(() => notADatabase.close())
    await t.rejects(task.findAll(), noDatabase, 'something that is not a Drizzle database')
  })
}

t.test('createModel rejects what is not a table with an id', async (t) => {
  t.throws(() => createModel(relations(tasks, () => ({})) as never, { name: 'task' }), { message: messages.relationSchema })
  t.throws(() => createModel({} as never, { name: 'task' }), { message: messages.notATable })
  const pairs = pgTable('pairs', { left: integer('left').notNull(), right: integer('right').notNull() })
  t.throws(() => createModel(pairs, { name: 'pair' }), { message: "createModel: table 'pairs' has no 'id' column or single-column primary key", code: 'FA_ERR_NO_ID_COLUMN' })
  const keyed = pgTable('keyed', { code: text('code').primaryKey(), label: text('label') })
  t.doesNotThrow(() => createModel(keyed, { name: 'keyed' }), 'a single-column primary key stands in for id')
})

/** Compiled, never run: the model's methods are typed from the table. */
export function typeChecks(task: ReturnType<typeof createModel<typeof tasks>>) {
  // @ts-expect-error `title` is required
  void task.create({ data: {} })
  // @ts-expect-error `status` is one of the enum values
  void task.create({ data: { title: 'x', status: 'closed' } })
  // @ts-expect-error `points` is a number
  void task.update({ id: 'x', data: { points: '3' } })
  void task.create({ data: { title: 'x', dueAt: new Date(), dueDay: '2030-01-01' } }).then((result) => {
    if (!result.ok) return
    const created: Date = result.value.createdAt
    const points: number | null = result.value.points
    // @ts-expect-error rows have no `colour`
    void result.value.colour
    return [created, points]
  })
  void task.findPaginated({ cursor: '' }).then((page) => page.ok && page.value.nextCursor)
  void task.findPaginated({ limit: 5 }).then((page) => page.ok && page.value.total)
}

onBothDatabases(t, setup, async (t, database) => {
  t.test('without a logger: plain Err texts', (t) => modelSuite(t, database, undefined))
  t.test('with a logger: Err texts carry the log id', (t) => modelSuite(t, database, recordingLogger()))
})
