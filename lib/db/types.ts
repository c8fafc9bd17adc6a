import type { TObject, TOptional, TUnsafe } from 'typebox'
import type { Result } from '../result.js'

/*
 * The types of the data helpers are structural: nothing here imports drizzle-orm's declarations,
 * which do not type-check under `skipLibCheck: false` (they reach its optional drivers), so a
 * program that imports fastify-actions (and never a database) can check every declaration file.
 * A Drizzle table or database fits these shapes as it is.
 */

/** A Drizzle table (`pgTable(...)`): what the helpers read of its type, the row and insert types. */
export interface DrizzleTable {
  readonly $inferSelect: object
  readonly $inferInsert: object
}

/**
 * A root database (drizzle-orm/pglite or drizzle-orm/node-postgres) or a transaction of one:
 * a Drizzle transaction is a PgDatabase too, so anything that takes a DBX runs inside it. Any
 * Drizzle `PgDatabase` is one (a structural type: see above).
 */
export interface DBX {
  select: (...args: any[]) => any
  insert: (...args: any[]) => any
  update: (...args: any[]) => any
  delete: (...args: any[]) => any
  execute: (...args: any[]) => any
  transaction: <R>(run: (tx: any) => Promise<R>, config?: any) => Promise<R>
}

/** Rows per page of `findPaginated` when no `limit` is given. */
export const DEFAULT_PAGE_SIZE = 50

type Table = DrizzleTable
type PgTable = DrizzleTable

/** The parameter every data function accepts: the database or transaction to run on. */
export interface DBParams {
  dbx?: DBX
}

/** Timestamps travel as ISO 8601 strings in JSON; in code a Date works as well. */
type AcceptDate<V> = V extends Date ? Date | string : V
/** What a JSON payload carries for a value of type V. */
type AsJson<V> = V extends Date ? string : V

type OptionalKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? K : never }[keyof T]

/** The data `create` accepts: the table's insert type, timestamps as Date or ISO string. */
export type ModelInsert<T extends Table> = { [K in keyof T['$inferInsert']]: AcceptDate<T['$inferInsert'][K]> }
/** The data `update` accepts: any non-empty subset of the insert data. */
export type ModelUpdate<T extends Table> = Partial<ModelInsert<T>>
/** One row as the database returns it. */
export type ModelRow<T extends Table> = T['$inferSelect']

/** TypeBox schema of an insert: required where the column is NOT NULL without a default. */
export type InsertSchema<T extends Table> = TObject<{
  [K in keyof T['$inferInsert']]-?: K extends OptionalKeys<T['$inferInsert']>
    ? TOptional<TUnsafe<AsJson<Exclude<T['$inferInsert'][K], undefined>>>>
    : TUnsafe<AsJson<T['$inferInsert'][K]>>
}>
/** TypeBox schema of an update: every insertable column optional. */
export type UpdateSchema<T extends Table> = TObject<{
  [K in keyof T['$inferInsert']]-?: TOptional<TUnsafe<AsJson<Exclude<T['$inferInsert'][K], undefined>>>>
}>
/** TypeBox schema of a row. */
export type SelectSchema<T extends Table> = TObject<{ [K in keyof T['$inferSelect']]-?: TUnsafe<T['$inferSelect'][K]> }>

export interface TableSchemas<T extends Table> {
  insert: InsertSchema<T>
  update: UpdateSchema<T>
  select: SelectSchema<T>
}

export interface ModelOptions {
  /** Entity name for messages (`Task not found`) and log `atFunction` values (`task.create`). */
  name: string
  /** The database; when omitted, `getContext().resources.database` is read at each call. */
  db?: DBX
  /** Default column of cursor pagination; `id` unless given. */
  cursorColumn?: string
}

export interface WriteParams<T extends Table> extends DBParams {
  data: ModelInsert<T>
}

export interface UpdateParams<T extends Table> extends DBParams {
  id: string | number
  data: ModelUpdate<T>
}

/** `findPaginated` options: offset mode without `cursor`, cursor mode with one. */
export interface PaginationOptions extends DBParams {
  /** Rows per page, 50 by default. */
  limit?: number
  /** Offset mode: rows to skip, 0 by default. */
  offset?: number
  /** Cursor mode: the previous page's `nextCursor` (rows below it are returned); `''` for the first page. */
  cursor?: string
  /** Cursor mode: overrides the model's `cursorColumn` for this call. */
  cursorColumn?: string
}

export type OffsetPaginationOptions = PaginationOptions & { cursor?: undefined }
export type CursorPaginationOptions = PaginationOptions & { cursor: string }

export interface OffsetPage<Row> {
  items: Row[]
  total: number
  hasMore: boolean
}

export interface CursorPage<Row> {
  items: Row[]
  nextCursor: string | null
  hasMore: boolean
}

type Async<T> = Promise<Result<T, string>>

/** The operations `createModel` returns; every one answers a Result and never throws for a data problem. */
export interface Model<T extends PgTable> {
  readonly table: T
  readonly schemas: TableSchemas<T>
  create(params: WriteParams<T>): Async<ModelRow<T>>
  createTx(params: WriteParams<T>): Async<ModelRow<T>>
  findById(id: string | number, dbx?: DBX): Async<ModelRow<T>>
  update(params: UpdateParams<T>): Async<ModelRow<T>>
  updateTx(params: UpdateParams<T>): Async<ModelRow<T>>
  delete(id: string | number, dbx?: DBX): Async<ModelRow<T>>
  findAll(dbx?: DBX): Async<ModelRow<T>[]>
  findPaginated(options: CursorPaginationOptions): Async<CursorPage<ModelRow<T>>>
  findPaginated(options?: OffsetPaginationOptions): Async<OffsetPage<ModelRow<T>>>
  findPaginated(options?: PaginationOptions): Async<OffsetPage<ModelRow<T>> | CursorPage<ModelRow<T>>>
}
