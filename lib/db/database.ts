import { isEntity } from './entity.js'
import { getContext } from '../context.js'
import { ErrNoDatabase } from '../errors.js'
import type { DBX } from './types.js'

/** True for a Drizzle PostgreSQL database or transaction (pglite, node-postgres, …). */
export function isDatabase(value: unknown): value is DBX {
  return isEntity(value, 'PgDatabase')
}

/** `getContext().resources.database` when it is a Drizzle PostgreSQL database; undefined before `createServer` or when unset. */
export function contextDatabase(): DBX | undefined {
  let database: unknown
  try {
    database = getContext().resources.database
  } catch {
    return undefined // getContext throws before createServer
  }
  return isDatabase(database) ? database : undefined
}

/** `dbx`, else the context's database; throws `ErrNoDatabase` naming `caller` when there is neither. */
export function requireDatabase(dbx: DBX | undefined, caller: string): DBX {
  const database = dbx ?? contextDatabase()
  if (!database) throw new ErrNoDatabase(caller)
  return database
}
