import { count, desc, eq, getTableColumns, getTableName, lt, type Column, type SQL } from 'drizzle-orm'
import type { PgTable } from 'drizzle-orm/pg-core'
import { Compile } from 'typebox/compile'
import { ErrNoDatabase, ErrNoIdColumn } from '../errors.js'
import { isPlainObject } from '../envelope.js'
import { contextLogger, handleError } from '../handle-error.js'
import { messages } from '../messages.js'
import { Err, Ok, type Result } from '../result.js'
import { compileValidator, type Validator } from '../validation.js'
import { contextDatabase } from './database.js'
import { describeDatabaseError, thrownMessage } from './errors.js'
import { getValidationSchemas, isDateColumn } from './schemas.js'
import { createTransactionVariant } from './transaction.js'
import type { CursorPage, DBX, Model, OffsetPage, ModelOptions, ModelRow, PaginationOptions, UpdateParams, WriteParams } from './types.js'

export const DEFAULT_PAGE_SIZE = 50

type Values = Record<string, unknown>
type Row = Record<string, unknown>
type Page = OffsetPage<Row> | CursorPage<Row>

/** The `id` column, else the table's only primary-key column. */
function findIdKey(columns: Record<string, Column>): string | undefined {
  if (columns.id) return 'id'
  const primary = Object.keys(columns).filter((key) => columns[key].primary)
  return primary.length === 1 ? primary[0] : undefined
}

/** `created_at`, else `createdAt`, by property or column name. */
function findCreatedKey(columns: Record<string, Column>): string | undefined {
  for (const wanted of ['created_at', 'createdAt']) {
    const key = Object.keys(columns).find((candidate) => candidate === wanted || columns[candidate].name === wanted)
    if (key) return key
  }
  return undefined
}

function cursorText(value: unknown): string {
  return value instanceof Date ? value.toISOString() : String(value)
}

/**
 * CRUD operations on one table. Every operation returns a Result: a data problem (validation,
 * a missing row, a database error) is an `Err`, logged through `handleError` when a logger is
 * available (the text then starts with `[<log_id>]`). Only a missing database throws.
 */
export function createModel<T extends PgTable>(table: T, options: ModelOptions): Model<T> {
  const { name } = options
  const schemas = getValidationSchemas(table)
  const columns = getTableColumns(table) as Record<string, Column>
  const foundIdKey = findIdKey(columns)
  if (!foundIdKey) throw new ErrNoIdColumn(getTableName(table))
  const idKey: string = foundIdKey
  const idColumn = columns[idKey]
  const createdKey = findCreatedKey(columns)
  const defaultCursor = options.cursorColumn ?? 'id'
  const dateKeys = new Set(Object.keys(columns).filter((key) => isDateColumn(columns[key])))
  const validateInsert = compileValidator(schemas.insert)
  const validateUpdate = compileValidator(schemas.update)
  const keyCheckers = new Map<string, ReturnType<typeof Compile>>()
  const order: SQL[] = [
    ...(createdKey ? [desc(columns[createdKey])] : []),
    ...(createdKey !== idKey ? [desc(idColumn)] : []),
  ]
  // Drizzle's builders are typed per table; inside this generic factory they see the base PgTable.
  const anyTable = table as PgTable

  function database(dbx: DBX | undefined): DBX {
    const db = dbx ?? options.db ?? contextDatabase()
    if (!db) throw new ErrNoDatabase('createModel')
    return db
  }

  function fail(operation: string, message: string, data?: unknown): Result<never, string> {
    const logger = contextLogger()
    return logger ? handleError({ message, data, logger, atFunction: `${name}.${operation}` }) : Err(message)
  }

  /**
   * Runs one operation; a thrown database error becomes an Err. A data or constraint error
   * (SQLSTATE class 22 or 23) keeps the driver's text, which tells the caller what to fix; any other
   * (a refused connection, a failed login) answers a fixed text: hosts and users stay in the log.
   */
  async function attempt<R>(operation: string, run: () => Promise<Result<R, string>>): Promise<Result<R, string>> {
    try {
      return await run()
    } catch (error) {
      const details = describeDatabaseError(error)
      const code = typeof details.code === 'string' ? details.code : ''
      const message = code.startsWith('22') || code.startsWith('23') ? thrownMessage(error) : messages.databaseFailed(name, operation)
      return fail(operation, message, details)
    }
  }

  /**
   * Validates write data against a schema and returns the values to write. Dates are checked as
   * ISO strings (what JSON carries) and handed to Drizzle as Dates; undefined keys are dropped.
   */
  async function prepare(operation: string, data: unknown, validate: Validator): Promise<Result<Values, string>> {
    if (!isPlainObject(data)) return fail(operation, messages.invalidData(name), { errors: [{ path: '', message: 'must be object' }] })
    const json: Values = {}
    for (const [key, value] of Object.entries(data)) {
      if (value === undefined) continue
      const valid = value instanceof Date && dateKeys.has(key) && !Number.isNaN(value.getTime())
      json[key] = valid ? toIso(key, value) : value
    }
    const checked = await validate(json)
    if (!checked.ok) return fail(operation, messages.invalidData(name), { errors: checked.errors })
    for (const key of dateKeys) if (typeof json[key] === 'string') json[key] = new Date(json[key] as string)
    return Ok(json)
  }

  function toIso(key: string, value: Date): string {
    return columns[key].columnType === 'PgDate' ? value.toISOString().slice(0, 10) : value.toISOString()
  }

  /** A key value (id or cursor) as the column holds it, or undefined when the column could never hold it. */
  function parseKey(key: string, raw: unknown): unknown {
    const column = columns[key]
    let checker = keyCheckers.get(key)
    if (!checker) keyCheckers.set(key, (checker = Compile(schemas.select.properties[key as keyof typeof schemas.select.properties])))
    let value = raw
    if (isDateColumn(column) && (typeof raw === 'string' || typeof raw === 'number')) value = new Date(raw)
    else if (typeof raw === 'string' && column.dataType === 'number' && /^[+-]?\d+(?:\.\d+)?$/.test(raw)) value = Number(raw)
    else if (typeof raw === 'string' && column.dataType === 'bigint' && /^[+-]?\d+$/.test(raw)) value = BigInt(raw)
    return value !== null && checker.Check(value) ? value : undefined
  }

  async function create({ data, dbx }: WriteParams<T>): Promise<Result<ModelRow<T>, string>> {
    const db = database(dbx)
    return attempt('create', async () => {
      const values = await prepare('create', data, validateInsert)
      if (!values.ok) return values
      const rows = await db.insert(anyTable).values(values.value).returning()
      return rows[0] ? Ok(rows[0] as ModelRow<T>) : fail('create', messages.creationNoData(name))
    })
  }

  async function update({ id, data, dbx }: UpdateParams<T>): Promise<Result<ModelRow<T>, string>> {
    const db = database(dbx)
    return attempt('update', async () => {
      const values = await prepare('update', data, validateUpdate)
      if (!values.ok) return values
      const key = parseKey(idKey, id)
      if (key === undefined) return fail('update', messages.notFound(name), { id })
      const rows = await db.update(anyTable).set(values.value).where(eq(idColumn, key)).returning()
      return rows[0] ? Ok(rows[0] as ModelRow<T>) : fail('update', messages.notFound(name), { id })
    })
  }

  /** The transaction variant of `run`; a failure to open the transaction is an Err too. */
  function inTransaction<P extends WriteParams<T> | UpdateParams<T>>(
    operation: string,
    run: (params: P) => Promise<Result<ModelRow<T>, string>>,
  ): (params: P) => Promise<Result<ModelRow<T>, string>> {
    const variant = createTransactionVariant(run)
    return async (params) => {
      const dbx = database(params.dbx)
      return attempt(operation, () => variant({ ...params, dbx }))
    }
  }

  async function findById(id: string | number, dbx?: DBX): Promise<Result<ModelRow<T>, string>> {
    const db = database(dbx)
    return attempt('findById', async () => {
      const key = parseKey(idKey, id)
      if (key === undefined) return fail('findById', messages.notFound(name), { id })
      const rows = await db.select().from(anyTable).where(eq(idColumn, key)).limit(1)
      return rows[0] ? Ok(rows[0] as ModelRow<T>) : fail('findById', messages.notFound(name), { id })
    })
  }

  async function remove(id: string | number, dbx?: DBX): Promise<Result<ModelRow<T>, string>> {
    const db = database(dbx)
    return attempt('delete', async () => {
      const key = parseKey(idKey, id)
      if (key === undefined) return fail('delete', messages.notFound(name), { id })
      const rows = await db.delete(anyTable).where(eq(idColumn, key)).returning()
      return rows[0] ? Ok(rows[0] as ModelRow<T>) : fail('delete', messages.notFound(name), { id })
    })
  }

  async function findAll(dbx?: DBX): Promise<Result<ModelRow<T>[], string>> {
    const db = database(dbx)
    return attempt('findAll', async () => {
      const query = db.select().from(anyTable)
      const rows = createdKey ? await query.orderBy(desc(columns[createdKey])) : await query
      return Ok(rows as ModelRow<T>[])
    })
  }

  async function findPaginated(options: PaginationOptions = {}): Promise<Result<Page, string>> {
    const db = database(options.dbx)
    return attempt<Page>('findPaginated', async () => {
      const limit = options.limit ?? DEFAULT_PAGE_SIZE
      const offset = options.cursor === undefined ? (options.offset ?? 0) : 0
      if (!Number.isInteger(limit) || limit < 1 || !Number.isInteger(offset) || offset < 0) {
        return fail('findPaginated', messages.invalidPagination, { limit, offset })
      }
      if (options.cursor === undefined) {
        const [{ total }] = await db.select({ total: count() }).from(anyTable)
        const items = (await db.select().from(anyTable).orderBy(...order).limit(limit).offset(offset)) as Row[]
        return Ok({ items, total, hasMore: offset + items.length < total })
      }
      const key = options.cursorColumn ?? defaultCursor
      if (!Object.hasOwn(columns, key)) return fail('findPaginated', messages.unknownCursorColumn(key, name))
      const column = columns[key]
      // An empty cursor asks for the first page.
      const below = options.cursor === '' ? undefined : parseKey(key, options.cursor)
      if (options.cursor !== '' && below === undefined) {
        return fail('findPaginated', messages.invalidPagination, { cursor: options.cursor, cursorColumn: key })
      }
      const query = db.select().from(anyTable)
      const filtered = below === undefined ? query : query.where(lt(column, below))
      const rows = (await filtered.orderBy(desc(column)).limit(limit + 1)) as Row[]
      const hasMore = rows.length > limit
      const items = hasMore ? rows.slice(0, limit) : rows
      return Ok({ items, nextCursor: hasMore ? cursorText(items[items.length - 1][key]) : null, hasMore })
    })
  }

  return {
    table,
    schemas,
    create,
    createTx: inTransaction('createTx', create),
    findById,
    update,
    updateTx: inTransaction('updateTx', update),
    delete: remove,
    findAll,
    // One implementation behind the overloads: the result's shape follows `options.cursor`.
    findPaginated: findPaginated as Model<T>['findPaginated'],
  }
}
