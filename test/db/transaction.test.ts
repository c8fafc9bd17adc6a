import t from 'tap'
import { count } from 'drizzle-orm'
import { integer, pgTable, text, type PgDatabase, type PgQueryResultHKT } from 'drizzle-orm/pg-core'
import { createTransactionVariant, Err, messages, Ok, type DBParams, type DBX } from '../../lib/index.js'
import { buildServer } from '../helpers/server.js'
import { onBothDatabases } from '../helpers/postgres.js'

const events = pgTable('events', { id: integer('id').primaryKey(), label: text('label').notNull() })
const setup = 'CREATE TABLE events (id integer PRIMARY KEY, label text NOT NULL)'

interface AddParams extends DBParams {
  id: number
  label: string
}

/** Inserts one event on the dbx it is given; answers Err when told to. */
async function addEvent({ dbx, id, label }: AddParams) {
  await dbx!.insert(events).values({ id, label })
  return label === 'fail' ? Err(`event ${id} refused`) : Ok({ id })
}

async function labels(dbx: DBX): Promise<string[]> {
  // DBX is structural (no drizzle-orm type in the package's declarations): Drizzle's own type types the query.
  const db = dbx as PgDatabase<PgQueryResultHKT>
  const rows = await db.select().from(events).orderBy(events.id)
  return rows.map((row) => row.label)
}

t.test('without a database anywhere it throws', async (t) => {
  const variant = createTransactionVariant(addEvent)
  await t.rejects(variant({ id: 1, label: 'x' }), { message: 'createTransactionVariant: No database available.', code: 'FA_ERR_NO_DATABASE' })
})

onBothDatabases(t, setup, async (t, { db, exec }) => {
  const reset = () => exec('TRUNCATE events')
  const add = createTransactionVariant(addEvent)

  t.test('Ok commits and is returned', async (t) => {
    await reset()
    t.same(await add({ dbx: db, id: 1, label: 'kept' }), Ok({ id: 1 }))
    t.same(await labels(db), ['kept'])
  })

  t.test('Err rolls back and the very same Err is returned', async (t) => {
    await reset()
    let returned: unknown
    const variant = createTransactionVariant(async (params: AddParams) => (returned = await addEvent(params)))
    const result = await variant({ dbx: db, id: 1, label: 'fail' })
    t.equal(result, returned, 'the original Err object')
    t.same(result, Err('event 1 refused'))
    t.same(await labels(db), [], 'the insert was rolled back')
  })

  t.test('fn gets the params with dbx replaced by the transaction', async (t) => {
    let seen: (AddParams & { extra?: string }) | undefined
    const variant = createTransactionVariant(async (params: AddParams & { extra?: string }) => {
      seen = params
      return Ok(null)
    })
    await variant({ dbx: db, id: 7, label: 'x', extra: 'kept' })
    t.match(seen, { id: 7, label: 'x', extra: 'kept' })
    t.not(seen?.dbx, db, 'a transaction, not the root database')
    t.type(seen?.dbx?.transaction, 'function')
  })

  t.test('a throw rolls back and is rethrown', async (t) => {
    await reset()
    const variant = createTransactionVariant(async (params: AddParams) => {
      await addEvent(params)
      throw new Error('exploded')
    })
    await t.rejects(variant({ dbx: db, id: 1, label: 'x' }), { message: 'exploded' })
    t.same(await labels(db), [])
  })

  t.test('given a transaction it nests as a savepoint', async (t) => {
    await reset()
    const outer = createTransactionVariant(async ({ dbx }: DBParams) => {
      await add({ dbx, id: 1, label: 'outer' })
      const inner = await add({ dbx, id: 2, label: 'fail' })
      t.same(inner, Err('event 2 refused'))
      t.same(await labels(dbx!), ['outer'], 'only the savepoint was rolled back')
      await add({ dbx, id: 3, label: 'after' })
      return Ok(null)
    })
    t.same(await outer({ dbx: db }), Ok(null))
    t.same(await labels(db), ['outer', 'after'])

    await reset()
    const undone = createTransactionVariant(async ({ dbx }: DBParams) => {
      await add({ dbx, id: 1, label: 'inner ok' })
      return Err('outer refuses')
    })
    t.same(await undone({ dbx: db }), Err('outer refuses'))
    t.same(await labels(db), [], 'the outer Err undoes the committed savepoint')
  })

  t.test("without dbx it uses the context's database", async (t) => {
    await reset()
    const server = await buildServer({ rest: false, resources: { database: db } })
    t.teardown(() => server.close())
    t.same(await add({ id: 1, label: 'from the context' }), Ok({ id: 1 }))
    t.same(await add({ id: 2, label: 'fail' }), Err('event 2 refused'))
    const [{ total }] = await db.select({ total: count() }).from(events)
    t.equal(total, 1)
  })
})
