import { mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { PGlite } from '@electric-sql/pglite'
import { sql } from 'drizzle-orm'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import { drizzle as drizzlePglite, PgliteDatabase } from 'drizzle-orm/pglite'
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator'
import { Err, Ok, type Result } from 'fastify-actions'
import { SettingError } from '../settings.js'

/** The app's database as Drizzle types it, whichever driver runs it. */
export type Db = PgDatabase<PgQueryResultHKT>

export interface Database {
  db: Db
  /** `PostgreSQL at <host>/<db>` or `PGlite in <dir>`, never a password. */
  description: string
  close: () => Promise<void>
}

/** The SQL drizzle-kit generated from schema.ts (`npm run db:generate`). */
const migrationsFolder = fileURLToPath(new URL('./migrations', import.meta.url))

/**
 * PostgreSQL through `pg` when DATABASE_URL is set, else embedded PGlite in PGLITE_DIR (`memory://`
 * keeps nothing). `pg` and its Drizzle driver are imported only when used: a start on PGlite (and
 * `fastify-actions mcp`) does not load them.
 */
export async function openDatabase(env: NodeJS.ProcessEnv = process.env): Promise<Database> {
  if (env.DATABASE_URL) {
    const url = postgresUrl(env.DATABASE_URL)
    const [{ default: pg }, { drizzle: drizzlePg }] = await Promise.all([import('pg'), import('drizzle-orm/node-postgres')])
    // Fail fast when PostgreSQL stalls: 5 s to get a connection, 10 s for a statement (server side).
    const pool = new pg.Pool({ connectionString: env.DATABASE_URL, connectionTimeoutMillis: 5_000, statement_timeout: 10_000 })
    // An idle client dropped by the server (a restart, a failover) must not end the process.
    pool.on('error', (error) => console.error(`[database] idle client error: ${error.message}`))
    return { db: drizzlePg({ client: pool }), description: `PostgreSQL at ${url.host}${url.pathname}`, close: () => pool.end() }
  }
  const dataDir = env.PGLITE_DIR ?? './data/pglite'
  if (!dataDir.includes('://')) mkdirSync(dataDir, { recursive: true })
  const client = new PGlite(dataDir)
  return { db: drizzlePglite({ client }), description: `PGlite in ${dataDir}`, close: () => client.close() }
}

/** DATABASE_URL as a URL; a SettingError that never repeats the value (it holds a password) when it is not a PostgreSQL one. */
function postgresUrl(value: string): URL {
  let url: URL | undefined
  try {
    url = new URL(value)
  } catch {}
  if (url?.protocol !== 'postgres:' && url?.protocol !== 'postgresql:') {
    throw new SettingError('DATABASE_URL must be a PostgreSQL URL such as postgres://user:password@localhost:5432/app (unset: embedded PGlite)')
  }
  return url
}

/** Applies the migrations not applied yet (run by `onBoot` at every start). */
export async function migrateDatabase(db: Db): Promise<Result<null, string>> {
  try {
    if (db instanceof PgliteDatabase) await migratePglite(db, { migrationsFolder })
    else if (db instanceof (await import('drizzle-orm/node-postgres')).NodePgDatabase) {
      // The bookkeeping table lives next to the tables, in the connection's current schema.
      const { rows } = await db.execute<{ schema: string }>(sql`select current_schema() as schema`)
      const { migrate: migratePg } = await import('drizzle-orm/node-postgres/migrator')
      await migratePg(db, { migrationsFolder, migrationsSchema: rows[0]?.schema ?? 'public' })
    } else return Err('Database setup failed: expected a PGlite or node-postgres database')
    return Ok(null)
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error
    return Err(`Database setup failed: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
}
