import t from 'tap'
import { PGlite } from '@electric-sql/pglite'
import { drizzle } from 'drizzle-orm/pglite'
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres'
import pg from 'pg'
import { setupDatabase } from '../example/db.js'
import { freshPglite } from './helpers/pglite.js'
import { openPostgres, postgresSkipReason } from './helpers/postgres.js'

// The example's tables come from drizzle-kit migrations (example/drizzle/), applied by drizzle-orm's
// migrator at start-up: on a new database, again (nothing to do), and on a database that the
// example's earlier hand-written setup made (tasks already there).

async function open(t: { teardown: (fn: () => Promise<void>) => void }) {
  const client = await freshPglite()
  t.teardown(() => client.close())
  return { client, db: drizzle({ client }) }
}

async function tablesOf(client: PGlite): Promise<string[]> {
  const { rows } = await client.query<{ table_name: string }>(
    "select table_name from information_schema.tables where table_schema = 'public' order by table_name",
  )
  return rows.map((row) => row.table_name)
}

t.test('a new database: every table, then nothing left to apply', async (t) => {
  const { client, db } = await open(t)
  t.same(await setupDatabase(db), { ok: true, value: null })
  t.same(await tablesOf(client), ['attachments', 'tasks', 'users'])
  t.same(await setupDatabase(db), { ok: true, value: null }, 'idempotent')
  const { rows } = await client.query<{ count: number }>('select count(*)::int as count from drizzle.__drizzle_migrations')
  t.equal(rows[0].count, 1, 'one migration recorded')
})

t.test('a database made by the earlier hand-written setup keeps its tasks', async (t) => {
  const { client, db } = await open(t)
  await client.exec(`CREATE TABLE tasks (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(), title varchar(200) NOT NULL, notes text,
    done boolean NOT NULL DEFAULT false, owner_id text, created_at timestamptz(3) NOT NULL DEFAULT now());
    CREATE INDEX tasks_owner_id_idx ON tasks (owner_id);
    INSERT INTO tasks (title) VALUES ('kept');`)
  t.same(await setupDatabase(db), { ok: true, value: null })
  t.same(await tablesOf(client), ['attachments', 'tasks', 'users'])
  const { rows } = await client.query<{ title: string }>('select title from tasks')
  t.same(rows, [{ title: 'kept' }])
})

t.test('instances starting together on one PostgreSQL apply the migrations once (an advisory lock)', { skip: postgresSkipReason() }, async (t) => {
  const database = await openPostgres()
  t.teardown(() => database.close())
  const schema = database.schema!
  // One pool per "instance", as three processes of a fleet would have.
  const pools = [1, 2, 3, 4].map(() => {
    const pool = new pg.Pool({ connectionString: database.url, max: 2, options: `-c search_path=${schema}` })
    t.teardown(() => pool.end())
    return pool
  })
  const results = await Promise.all(pools.map((pool) => setupDatabase(drizzlePg({ client: pool }))))
  t.same(results, pools.map(() => ({ ok: true, value: null })), 'every instance starts')
  const { rows } = await pools[0].query<{ count: number }>(`select count(*)::int as count from "${schema}".__drizzle_migrations`)
  t.equal(rows[0].count, 1, 'one migration recorded')
})
