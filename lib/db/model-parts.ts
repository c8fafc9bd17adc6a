/** A model's shared state (ModelParts) and the steps every operation goes through: database, validation, Err and logging. */
import type { DrizzleTable as PgTable } from './types.js'
import type { TSchema } from 'typebox'
import { isPlainObject } from '../envelope.js'
import { contextLogger, handleError } from '../handle-error.js'
import { messages } from '../messages.js'
import { Err, Ok, type Result } from '../result.js'
import { compileValidator, type Validator } from '../validation.js'
import { requireDatabase } from './database.js'
import { describeDatabaseError, thrownMessage } from './errors.js'
import { getValidationSchemas } from './schemas.js'
import { createKeyParser, describeTable, isoText, type KeyParser, type TableInfo } from './table-info.js'
import type { DBX, ModelOptions, TableSchemas } from './types.js'

type Values = Record<string, unknown>

/** What every operation of one model shares: its table, what was read of it, its validators and options. */
export interface ModelParts<T extends PgTable> {
  table: T
  schemas: TableSchemas<T>
  options: ModelOptions
  /** Entity name for messages and log `atFunction` values. */
  name: string
  info: TableInfo
  parseKey: KeyParser
  validateInsert: Validator
  validateUpdate: Validator
  /** The model's cursor column, `id` unless `options.cursorColumn` names one. */
  defaultCursor: string
}

/** Reads the table once: its schemas (throws for anything that is not a table), columns and validators. */
export function createModelParts<T extends PgTable>(table: T, options: ModelOptions): ModelParts<T> {
  const schemas = getValidationSchemas(table)
  const info = describeTable(table)
  const properties = schemas.select.properties as unknown as Record<string, TSchema>
  return {
    table,
    schemas,
    options,
    name: options.name,
    info,
    parseKey: createKeyParser(info.columns, properties),
    validateInsert: compileValidator(schemas.insert),
    validateUpdate: compileValidator(schemas.update),
    defaultCursor: options.cursorColumn ?? 'id',
  }
}

/** The database an operation runs on: the call's `dbx`, else the model's `db`, else the context's. */
export function modelDatabase(parts: ModelParts<PgTable>, dbx: DBX | undefined): DBX {
  return requireDatabase(dbx ?? parts.options.db, 'createModel')
}

/** An Err with `message`, logged through `handleError` as `<name>.<operation>` when a logger is available. */
export function fail(parts: ModelParts<PgTable>, operation: string, message: string, data?: unknown): Result<never, string> {
  const logger = contextLogger()
  return logger ? handleError({ message, data, logger, atFunction: `${parts.name}.${operation}` }) : Err(message)
}

/**
 * Runs one operation; a thrown database error becomes an Err. A data or constraint error
 * (SQLSTATE class 22 or 23) keeps the driver's text, which tells the caller what to fix; any other
 * (a refused connection, a failed login) answers a fixed text: hosts and users stay in the log.
 */
export async function attempt<R>(
  parts: ModelParts<PgTable>,
  operation: string,
  run: () => Promise<Result<R, string>>,
): Promise<Result<R, string>> {
  try {
    return await run()
  } catch (error) {
    const details = describeDatabaseError(error)
    const code = typeof details.code === 'string' ? details.code : ''
    const message = code.startsWith('22') || code.startsWith('23') ? thrownMessage(error) : messages.databaseFailed(parts.name, operation)
    return fail(parts, operation, message, details)
  }
}

/**
 * Validates write data against a schema and returns the values to write. Dates are checked as
 * ISO strings (what JSON carries) and handed to Drizzle as Dates; undefined keys are dropped.
 */
export async function prepare(
  parts: ModelParts<PgTable>,
  operation: string,
  data: unknown,
  validate: Validator,
): Promise<Result<Values, string>> {
  const { columns, dateKeys } = parts.info
  if (!isPlainObject(data)) return fail(parts, operation, messages.invalidData(parts.name), { errors: [{ path: '', message: 'must be object' }] })
  const json: Values = {}
  for (const [key, value] of Object.entries(data)) {
    if (value === undefined) continue
    const valid = value instanceof Date && dateKeys.has(key) && !Number.isNaN(value.getTime())
    json[key] = valid ? isoText(columns[key], value) : value
  }
  const checked = await validate(json)
  if (!checked.ok) return fail(parts, operation, messages.invalidData(parts.name), { errors: checked.errors })
  for (const key of dateKeys) if (typeof json[key] === 'string') json[key] = new Date(json[key] as string)
  return Ok(json)
}
