import t from 'tap'
import { getTableColumns, is, relations, Relations } from 'drizzle-orm'
import { entityKind } from 'drizzle-orm/entity'
import { PgDatabase, integer, pgTable, text } from 'drizzle-orm/pg-core'
import { isEntity, tableColumns } from '../../lib/db/entity.js'
import { onBothDatabases } from '../helpers/postgres.js'

const notes = pgTable('notes', { id: integer('id').primaryKey(), body: text('body') })
const noteRelations = relations(notes, () => ({}))

t.test('the entity kinds the helpers name are the ones Drizzle gives its classes', async (t) => {
  t.equal((PgDatabase as unknown as Record<symbol, unknown>)[entityKind], 'PgDatabase')
  t.equal((Relations as unknown as Record<symbol, unknown>)[entityKind], 'Relations')
})

t.test('isEntity answers as Drizzle\'s is() does, without the class', async (t) => {
  t.equal(isEntity(noteRelations, 'Relations'), true)
  t.equal(is(noteRelations, Relations), true)
  t.equal(isEntity(notes, 'Relations'), false)
  t.equal(isEntity(notes, 'PgDatabase'), false)
  for (const value of [null, undefined, 0, 'PgDatabase', {}, Object.create(null), () => {}]) t.equal(isEntity(value, 'PgDatabase'), false)
  // A class named like one is not one: the kind is Drizzle's static symbol, not the name.
  class PgDatabaseLookalike {}
  t.equal(isEntity(new PgDatabaseLookalike(), 'PgDatabase'), false)
})

t.test('tableColumns is getTableColumns', async (t) => {
  t.equal(tableColumns(notes), getTableColumns(notes))
  t.same(Object.keys(tableColumns(notes)), ['id', 'body'])
})

t.test('a database and a transaction are PgDatabase entities', async (t) => {
  onBothDatabases(t, '', async (t, database) => {
    t.equal(isEntity(database.db, 'PgDatabase'), true)
    t.equal(is(database.db, PgDatabase), true)
    await database.db.transaction(async (tx) => {
      t.equal(isEntity(tx, 'PgDatabase'), true)
    })
  })
})
