import { mkdirSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import { fileURLToPath } from 'node:url'
import { sql } from 'drizzle-orm'
import { drizzle as drizzlePglite, PgliteDatabase } from 'drizzle-orm/pglite'
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator'
import { drizzle as drizzlePg, NodePgDatabase } from 'drizzle-orm/node-postgres'
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import pg from 'pg'
import { Err, Ok, type Result } from '../lib/index.js'

/**
 * The app's database, typed by Drizzle (PGlite or node-postgres): queries written against it are
 * typed. It fits fastify-actions' structural `DBX` wherever the helpers take one.
 */
export type Db = PgDatabase<PgQueryResultHKT>

/** The SQL drizzle-kit generated from example/schema.ts. */
export const migrationsFolder = fileURLToPath(new URL('./drizzle', import.meta.url))

export interface Database {
  db: Db
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
    // Fail fast when PostgreSQL stalls: 5 s to get a connection, 10 s for a statement (server side).
    const pool = new pg.Pool({ connectionString: settings.DATABASE_URL, connectionTimeoutMillis: 5_000, statement_timeout: 10_000 })
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

/** The advisory lock that makes instances starting together apply the migrations one at a time. */
const MIGRATION_LOCK = 7_246_150_112

/**
 * drizzle-orm's PostgreSQL migrator takes no lock: several instances starting at once would each
 * apply the same migration (and fail on "already exists"). The migrations run on one connection
 * holding a session advisory lock, so the others wait and then find nothing left to apply.
 */
async function migrateLocked(db: NodePgDatabase): Promise<void> {
  const given = (db as unknown as { $client: pg.Pool | pg.Client | pg.PoolClient }).$client
  const client = given instanceof pg.Pool ? await given.connect() : given
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK])
    try {
      const locked = drizzlePg({ client })
      // The bookkeeping table lives next to the tables, in the schema of the connection's search_path.
      const { rows } = await locked.execute<{ schema: string }>(sql`select current_schema() as schema`)
      await migratePg(locked, { migrationsFolder, migrationsSchema: rows[0]?.schema ?? 'public' })
    } finally {
      await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK])
    }
  } finally {
    if (given instanceof pg.Pool) (client as pg.PoolClient).release()
  }
}

/** The schema step `onBoot` runs: drizzle-orm's migrator applies the migrations not applied yet. */
export async function setupDatabase(db: Db): Promise<Result<null, string>> {
  try {
    if (db instanceof PgliteDatabase) await migratePglite(db, { migrationsFolder })
    else if (db instanceof NodePgDatabase) await migrateLocked(db as NodePgDatabase)
    else return Err('Database setup failed: expected a PGlite or node-postgres Drizzle database')
    return Ok(null)
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error
    return Err(`Database setup failed: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
}
