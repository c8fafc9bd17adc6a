import type { ErrResult, Result } from '../result.js'
import { requireDatabase } from './database.js'
import type { DBParams } from './types.js'

/** Thrown inside the transaction to roll it back; carries the Err the caller gets. */
class Rollback extends Error {
  constructor(readonly result: ErrResult<string>) {
    super(result.error)
  }
}

/**
 * Wraps `fn` so it runs in a transaction: `dbx.transaction(tx => fn({ ...params, dbx: tx }))`.
 * An `Err` from `fn` rolls the transaction back and is returned as it is. Given a transaction in
 * `params.dbx`, Drizzle nests it as a savepoint. Without `params.dbx` the context's database is used.
 * Anything `fn` throws rolls back too and is rethrown.
 */
export function createTransactionVariant<P extends DBParams, T>(
  fn: (params: P) => Result<T, string> | Promise<Result<T, string>>,
): (params: P) => Promise<Result<T, string>> {
  return async (params) => {
    const dbx = requireDatabase(params.dbx, 'createTransactionVariant')
    try {
      return await dbx.transaction(async (tx) => {
        const result = await fn({ ...params, dbx: tx })
        if (!result.ok) throw new Rollback(result)
        return result
      })
    } catch (error) {
      if (error instanceof Rollback) return error.result
      throw error
    }
  }
}
