import { errorMessage } from '../diagnostics.js'

/**
 * Drizzle's `DrizzleQueryError` (of 'drizzle-orm/errors'), told by its shape so that the module,
 * and Drizzle with it, is not loaded by a server without a database (see drizzle.ts): an Error with
 * the query text and its parameters, whose message is `Failed query: …`.
 */
interface QueryError extends Error {
  query: string
  params: unknown[]
}

function isQueryError(error: unknown): error is QueryError {
  return (
    error instanceof Error &&
    typeof (error as Partial<QueryError>).query === 'string' &&
    Array.isArray((error as Partial<QueryError>).params) &&
    error.message.startsWith('Failed query: ')
  )
}

/**
 * The driver's own error behind Drizzle's wrapper. Drizzle wraps every query error as
 * `Failed query: <SQL> params: <values>`; the SQL and its parameters must never reach a client.
 */
export function databaseCause(error: unknown): unknown {
  return isQueryError(error) && error.cause !== undefined ? error.cause : error
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
    ...(isQueryError(error) ? { query: error.query, params: error.params } : {}),
  }
}
