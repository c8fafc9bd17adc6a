/** The row operations of a model (create, read, update, delete, their transaction variants), as functions over its ModelParts. */
import type { SQL } from 'drizzle-orm'
import type { DrizzleTable as PgTable } from './types.js'
import { messages } from '../messages.js'
import { Ok, type Result } from '../result.js'
import { attempt, fail, modelDatabase, prepare, type ModelParts } from './model-parts.js'
import { createTransactionVariant } from './transaction.js'
import { sqlBuilders } from './drizzle.js'
import type { DBX, ModelRow, UpdateParams, WriteParams } from './types.js'

type RowResult<T extends PgTable> = Promise<Result<ModelRow<T>, string>>

/**
 * The row `query` returns for the row whose id is `id`, or a `not found` Err: when `id` could never
 * be an id of the table (the query is then not run), or when no row answers.
 */
async function byId<T extends PgTable>(
  parts: ModelParts<T>,
  operation: string,
  id: string | number,
  query: (where: SQL) => Promise<unknown[]>,
): RowResult<T> {
  const key = parts.parseKey(parts.info.idKey, id)
  if (key === undefined) return fail(parts, operation, messages.notFound(parts.name), { id })
  const { eq } = await sqlBuilders()
  const rows = await query(eq(parts.info.idColumn, key))
  return rows[0] ? Ok(rows[0] as ModelRow<T>) : fail(parts, operation, messages.notFound(parts.name), { id })
}

export async function createRow<T extends PgTable>(parts: ModelParts<T>, { data, dbx }: WriteParams<T>): RowResult<T> {
  const db = modelDatabase(parts, dbx)
  const table: PgTable = parts.table
  return attempt(parts, 'create', async () => {
    const values = await prepare(parts, 'create', data, parts.validateInsert)
    if (!values.ok) return values
    const rows = await db.insert(table).values(values.value).returning()
    return rows[0] ? Ok(rows[0] as ModelRow<T>) : fail(parts, 'create', messages.creationNoData(parts.name))
  })
}

export async function updateRow<T extends PgTable>(parts: ModelParts<T>, { id, data, dbx }: UpdateParams<T>): RowResult<T> {
  const db = modelDatabase(parts, dbx)
  const table: PgTable = parts.table
  return attempt(parts, 'update', async () => {
    const values = await prepare(parts, 'update', data, parts.validateUpdate)
    if (!values.ok) return values
    return byId(parts, 'update', id, (where) => db.update(table).set(values.value).where(where).returning())
  })
}

export async function findRowById<T extends PgTable>(parts: ModelParts<T>, id: string | number, dbx?: DBX): RowResult<T> {
  const db = modelDatabase(parts, dbx)
  const table: PgTable = parts.table
  return attempt(parts, 'findById', () => byId(parts, 'findById', id, (where) => db.select().from(table).where(where).limit(1)))
}

export async function deleteRow<T extends PgTable>(parts: ModelParts<T>, id: string | number, dbx?: DBX): RowResult<T> {
  const db = modelDatabase(parts, dbx)
  const table: PgTable = parts.table
  return attempt(parts, 'delete', () => byId(parts, 'delete', id, (where) => db.delete(table).where(where).returning()))
}

/** Every row, newest first when the table has a creation timestamp. */
export async function findAllRows<T extends PgTable>(parts: ModelParts<T>, dbx?: DBX): Promise<Result<ModelRow<T>[], string>> {
  const db = modelDatabase(parts, dbx)
  const { createdKey, columns } = parts.info
  return attempt(parts, 'findAll', async () => {
    const query = db.select().from(parts.table as PgTable)
    const rows = createdKey ? await query.orderBy((await sqlBuilders()).desc(columns[createdKey])) : await query
    return Ok(rows as ModelRow<T>[])
  })
}

/** The transaction variant of `run`; a failure to open the transaction is an Err too. */
export function inTransaction<T extends PgTable, P extends WriteParams<T> | UpdateParams<T>>(
  parts: ModelParts<T>,
  operation: string,
  run: (params: P) => RowResult<T>,
): (params: P) => RowResult<T> {
  const variant = createTransactionVariant(run)
  return async (params) => {
    const dbx = modelDatabase(parts, params.dbx)
    return attempt(parts, operation, () => variant({ ...params, dbx }))
  }
}
