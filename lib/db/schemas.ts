import type { Column } from 'drizzle-orm'
import type { DrizzleTable as Table } from './types.js'
import { isEntity, tableColumns } from './entity.js'
import Type, { type TSchema } from 'typebox'
import { ErrNotATable, ErrRelationSchema } from '../errors.js'
import type { TableSchemas } from './types.js'

const INT2 = { minimum: -32768, maximum: 32767 }
const INT4 = { minimum: -2147483648, maximum: 2147483647 }
const SAFE_INTEGER = { minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }
const INT8 = { minimum: -(2n ** 63n), maximum: 2n ** 63n - 1n }
// PostgreSQL text cannot hold the NUL character: the insert would fail.
const NO_NUL = '^[^\\u0000]*$'
const NUMERIC = '^[+-]?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][+-]?\\d+)?$|^(?:NaN|[+-]?Infinity)$'

/** A JavaScript Date that holds a time (the driver's value of a timestamp or date column). */
const DateObject = () =>
  Type.Refine(
    Type.Unsafe<Date>({}),
    (value) => value instanceof Date && !Number.isNaN(value.getTime()),
    () => 'must be a valid Date',
  )

/** What the exported column checks read of a Drizzle column (structural: see types.ts). */
interface ColumnFlags {
  dataType: string
  generated?: { type?: string } | undefined
  generatedIdentity?: { type?: string } | undefined
}

/** Columns whose driver value is a Date: the model turns their ISO strings into Dates before writing. */
export function isDateColumn(column: ColumnFlags): boolean {
  return column.dataType === 'date'
}

/** Generated columns (`generatedAlwaysAs`, identity `always`) are written by the database only. */
export function isWritable(column: ColumnFlags): boolean {
  return column.generated?.type !== 'always' && column.generatedIdentity?.type !== 'always'
}

/** `numeric(p, s)`: at most p - s digits before the point, or PostgreSQL reports an overflow. */
function numericPattern(column: Column): string {
  const { precision, scale } = column as Column & { precision?: number; scale?: number }
  if (precision === undefined) return NUMERIC
  const integerDigits = precision - (scale ?? 0)
  return `^[+-]?(?=\\.?\\d)0*\\d{0,${integerDigits}}(?:\\.\\d*)?$`
}

/** The schema of one column's value, not counting NULL. `input` is what a write accepts, `row` what a read returns. */
function valueSchema(column: Column, side: 'input' | 'row'): TSchema {
  if (column.enumValues && column.enumValues.length > 0) return Type.Enum([...column.enumValues])
  return pgTypeSchema(column, side) ?? dataTypeSchema(column, side)
}

/** The schema of a PostgreSQL column type the framework knows, with its bounds; undefined for any other. */
function pgTypeSchema(column: Column, side: 'input' | 'row'): TSchema | undefined {
  const extra = column as Column & { length?: number; dimensions?: number; baseColumn?: Column }
  switch (column.columnType) {
    case 'PgUUID':
      return Type.String({ format: 'uuid' })
    case 'PgText':
      return Type.String({ pattern: NO_NUL })
    case 'PgVarchar':
    case 'PgChar':
      return extra.length === undefined
        ? Type.String({ pattern: NO_NUL })
        : Type.String({ maxLength: extra.length, pattern: NO_NUL })
    case 'PgSmallInt':
    case 'PgSmallSerial':
      return Type.Integer(INT2)
    case 'PgInteger':
    case 'PgSerial':
      return Type.Integer(INT4)
    case 'PgBigInt53':
    case 'PgBigSerial53':
      return Type.Integer(SAFE_INTEGER)
    case 'PgBigInt64':
    case 'PgBigSerial64':
      return Type.BigInt(INT8)
    case 'PgNumeric':
      return Type.String({ pattern: numericPattern(column) })
    case 'PgTimestamp':
      return side === 'input' ? Type.String({ format: 'date-time' }) : DateObject()
    case 'PgDate':
      return side === 'input' ? Type.String({ format: 'date' }) : DateObject()
    case 'PgDateString':
      return Type.String({ format: 'date' })
    case 'PgVector':
    case 'PgHalfVector':
      return Type.Array(Type.Number(), { minItems: extra.dimensions, maxItems: extra.dimensions })
    case 'PgArray':
      return Type.Array(extra.baseColumn ? nullable(extra.baseColumn, valueSchema(extra.baseColumn, side)) : Type.Unknown())
  }
  return undefined
}

/** The schema of any other column, by Drizzle's data type. */
function dataTypeSchema(column: Column, side: 'input' | 'row'): TSchema {
  switch (column.dataType) {
    case 'string':
      return Type.String()
    case 'number':
      return Type.Number()
    case 'boolean':
      return Type.Boolean()
    case 'bigint':
      return Type.BigInt()
    case 'date':
      return side === 'input' ? Type.String({ format: 'date-time' }) : DateObject()
    case 'array':
      return Type.Array(Type.Unknown())
    default:
      return Type.Unknown() // json, custom, buffer: the driver serialises them
  }
}

function nullable(column: Column, schema: TSchema): TSchema {
  return column.notNull ? schema : Type.Union([schema, Type.Null()])
}

function columnsOf(table: unknown): Record<string, Column> {
  if (isEntity(table, 'Relations')) throw new ErrRelationSchema()
  if (!isEntity(table, 'Table')) throw new ErrNotATable()
  return tableColumns(table as never)
}

/**
 * TypeBox schemas of a Drizzle table, generated from its columns: `insert` (required where the
 * column is NOT NULL without a default), `update` (every writable column optional, at least one),
 * `select` (a row as the driver returns it). Timestamps are ISO 8601 strings in `insert`/`update`
 * and Date objects in `select`. Throws for a `relations(...)` object or anything that is not a table.
 */
export function getValidationSchemas<T extends Table>(table: T): TableSchemas<T> {
  const columns = columnsOf(table)
  const insert: Record<string, TSchema> = {}
  const update: Record<string, TSchema> = {}
  const select: Record<string, TSchema> = {}
  for (const [key, column] of Object.entries(columns)) {
    const input = nullable(column, valueSchema(column, 'input'))
    select[key] = nullable(column, valueSchema(column, 'row'))
    if (!isWritable(column)) continue
    const optional = !column.notNull || column.hasDefault || column.generatedIdentity !== undefined
    insert[key] = optional ? Type.Optional(input) : input
    update[key] = Type.Optional(input)
  }
  // The schema types are computed from the table's own $inferInsert/$inferSelect (see types.ts).
  return {
    insert: Type.Object(insert, { additionalProperties: false }),
    update: Type.Object(update, { additionalProperties: false, minProperties: 1 }),
    select: Type.Object(select),
  } as unknown as TableSchemas<T>
}
