import { DrizzleQueryError } from 'drizzle-orm/errors'
import { errorMessage } from '../diagnostics.js'

/**
 * The driver's own error behind Drizzle's wrapper. Drizzle wraps every query error as
 * `Failed query: <SQL> params: <values>`; the SQL and its parameters must never reach a client.
 */
export function databaseCause(error: unknown): unknown {
  return error instanceof DrizzleQueryError && error.cause !== undefined ? error.cause : error
}

/** The text a thrown error answers with: the driver's own message for a database error, never the SQL. */
export function thrownMessage(error: unknown): string {
  return errorMessage(databaseCause(error))
}

/** What a log gets from a failed query: the driver's error, its code and detail, the SQL and its parameters. */
export function describeDatabaseError(error: unknown): Record<string, unknown> {
  const cause = databaseCause(error)
  const { code, detail, constraint } = (cause ?? {}) as { code?: unknown; detail?: unknown; constraint?: unknown }
  return {
    error: errorMessage(cause),
    code,
    detail,
    constraint,
    ...(error instanceof DrizzleQueryError ? { query: error.query, params: error.params } : {}),
  }
}
