/** Table introspection for models: the id and creation keys, date columns, the newest-first order, key parsing. */
import type { Column, SQL } from 'drizzle-orm'
import type { SqlBuilders } from './drizzle.js'
import { tableColumns, tableName } from './entity.js'
import type { DrizzleTable as PgTable } from './types.js'
import type { TSchema } from 'typebox'
import { Compile, type XSchema } from 'typebox/schema'
import { ErrNoIdColumn } from '../errors.js'
import { isDateColumn } from './schemas.js'

/** What a model needs to know of its table's columns, read once when the model is made. */
export interface TableInfo {
  columns: Record<string, Column>
  /** The key of the row identity (`findById`, `update`, `delete`). */
  idKey: string
  idColumn: Column
  /** The creation timestamp's key, when the table has one. */
  createdKey: string | undefined
  /** Keys whose driver value is a Date. */
  dateKeys: Set<string>
  /** Newest first (see `newestFirst`): built on the model's first page, once Drizzle's builders are loaded. */
  newestFirst?: SQL[]
}

/** A key value (id or cursor) as the column holds it, or undefined when the column could never hold it. */
export type KeyParser = (key: string, raw: unknown) => unknown

/** The `id` column, else the table's only primary-key column. */
export function findIdKey(columns: Record<string, Column>): string | undefined {
  if (columns.id) return 'id'
  const primary = Object.keys(columns).filter((key) => columns[key].primary)
  return primary.length === 1 ? primary[0] : undefined
}

/** `created_at`, else `createdAt`, by property or column name. */
export function findCreatedKey(columns: Record<string, Column>): string | undefined {
  for (const wanted of ['created_at', 'createdAt']) {
    const key = Object.keys(columns).find((candidate) => candidate === wanted || columns[candidate].name === wanted)
    if (key) return key
  }
  return undefined
}

/** Reads the table's columns; throws `ErrNoIdColumn` when no column identifies a row. */
export function describeTable(table: PgTable): TableInfo {
  const columns = tableColumns(table)
  const idKey = findIdKey(columns)
  if (!idKey) throw new ErrNoIdColumn(tableName(table))
  const idColumn = columns[idKey]
  const createdKey = findCreatedKey(columns)
  const dateKeys = new Set(Object.keys(columns).filter((key) => isDateColumn(columns[key])))
  return { columns, idKey, idColumn, createdKey, dateKeys }
}

/** Newest first: the creation timestamp, then the id, both descending. Built once per model. */
export function newestFirst(info: TableInfo, desc: SqlBuilders['desc']): SQL[] {
  info.newestFirst ??= [...(info.createdKey ? [desc(info.columns[info.createdKey])] : []), ...(info.createdKey !== info.idKey ? [desc(info.idColumn)] : [])]
  return info.newestFirst
}

/**
 * A compiled key check, typed by hand: through `Compile`'s own type, `Check`'s type guard makes tsc
 * relate TypeBox's static types, which costs seconds of every type-check of this package.
 */
interface KeyChecker {
  Check(value: unknown): boolean
}

/**
 * Parses key values against the row schema (`select.properties`): a date column takes an ISO
 * string or a number, a numeric one a decimal string, a bigint one an integer string. Each key's
 * checker is compiled on first use.
 */
export function createKeyParser(columns: Record<string, Column>, properties: Record<string, TSchema>): KeyParser {
  const checkers = new Map<string, KeyChecker>()
  return (key, raw) => {
    const column = columns[key]
    let checker = checkers.get(key)
    if (!checker) checkers.set(key, (checker = Compile(properties[key] as XSchema)))
    let value = raw
    if (isDateColumn(column) && (typeof raw === 'string' || typeof raw === 'number')) value = new Date(raw)
    else if (typeof raw === 'string' && column.dataType === 'number' && /^[+-]?\d+(?:\.\d+)?$/.test(raw)) value = Number(raw)
    else if (typeof raw === 'string' && column.dataType === 'bigint' && /^[+-]?\d+$/.test(raw)) value = BigInt(raw)
    return value !== null && checker.Check(value) ? value : undefined
  }
}

/** A valid Date as the column's JSON text: `YYYY-MM-DD` for a `date` column, full ISO 8601 otherwise. */
export function isoText(column: Column, value: Date): string {
  return column.columnType === 'PgDate' ? value.toISOString().slice(0, 10) : value.toISOString()
}
