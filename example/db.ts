import { mkdirSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import { sql } from 'drizzle-orm'
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite'
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres'
import pg from 'pg'
import { Err, Ok, type DBX, type Result } from '../lib/index.js'
import { setupStatements } from './schema.js'

export interface Database {
  db: DBX
  /** `PostgreSQL at <host>` or `PGlite in <dir>`, for the start-up line. */
  description: string
  close: () => Promise<void>
}

export interface DatabaseSettings {
  /** A PostgreSQL connection string; when set, the example runs on that server through `pg`. */
  DATABASE_URL?: string
  /** Where PGlite keeps its files (`./data/pglite` by default); `memory://` keeps nothing. */
  PGLITE_DIR?: string
  [name: string]: string | undefined
}

/** PostgreSQL when DATABASE_URL is set, else PGlite persisted under ./data: nothing to install. */
export async function openDatabase(settings: DatabaseSettings = process.env): Promise<Database> {
  if (settings.DATABASE_URL) {
    const pool = new pg.Pool({ connectionString: settings.DATABASE_URL })
    // An idle client dropped by the server (a restart, a failover) must not end the process.
    pool.on('error', (error) => console.error(`[database] idle client error: ${error.message}`))
    return {
      db: drizzlePg({ client: pool }),
      description: `PostgreSQL at ${serverOf(settings.DATABASE_URL)}`,
      close: () => pool.end(),
    }
  }
  const dataDir = settings.PGLITE_DIR ?? './data/pglite'
  if (!dataDir.includes('://')) mkdirSync(dataDir, { recursive: true })
  const client = await PGlite.create({ dataDir })
  return { db: drizzlePglite({ client }), description: `PGlite in ${dataDir}`, close: () => client.close() }
}

/** `host:port/database` of a connection string, never its password. */
function serverOf(url: string): string {
  try {
    const { host, pathname } = new URL(url)
    return `${host}${pathname}`
  } catch {
    return 'DATABASE_URL'
  }
}

/** The idempotent schema step `onBoot` runs: CREATE … IF NOT EXISTS. */
export async function setupDatabase(db: DBX): Promise<Result<null, string>> {
  try {
    for (const statement of setupStatements) await db.execute(sql.raw(statement))
    return Ok(null)
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error
    return Err(`Database setup failed: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
}
