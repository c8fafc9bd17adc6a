import type { DrizzleTable as PgTable } from './types.js'
import { createRow, deleteRow, findAllRows, findRowById, inTransaction, updateRow } from './crud.js'
import { createModelParts } from './model-parts.js'
import { findPage } from './pagination.js'
import type { Model, ModelOptions, UpdateParams, WriteParams } from './types.js'

// Declared in types.ts, whose declarations reach no drizzle-orm type (pagination's do, through the model's parts).
export { DEFAULT_PAGE_SIZE } from './types.js'

/**
 * CRUD operations on one table. Every operation returns a Result: a data problem (validation,
 * a missing row, a database error) is an `Err`, logged through `handleError` when a logger is
 * available (the text then starts with `[<log_id>]`). Only a missing database throws.
 */
export function createModel<T extends PgTable>(table: T, options: ModelOptions): Model<T> {
  const parts = createModelParts(table, options)
  const create = (params: WriteParams<T>) => createRow(parts, params)
  const update = (params: UpdateParams<T>) => updateRow(parts, params)
  return {
    table,
    schemas: parts.schemas,
    create,
    createTx: inTransaction(parts, 'createTx', create),
    findById: (id, dbx) => findRowById(parts, id, dbx),
    update,
    updateTx: inTransaction(parts, 'updateTx', update),
    delete: (id, dbx) => deleteRow(parts, id, dbx),
    findAll: (dbx) => findAllRows(parts, dbx),
    // One implementation behind the overloads: the result's shape follows `options.cursor`.
    findPaginated: ((options) => findPage(parts, options)) as Model<T>['findPaginated'],
  }
}
