import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite'
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres'
import pg from 'pg'
import type tap from 'tap'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import { freshPglite } from './pglite.js'
import { freePort } from './redis.js'

/**
 * The two databases the data helpers run on, behind one interface: PGlite (always) and a real
 * PostgreSQL server through `pg` (DATABASE_URL, else a throwaway cluster this helper starts).
 */
export interface TestDatabase {
  readonly kind: 'pglite' | 'postgres'
  /** Drizzle's own type, so the tests' queries are typed; it fits the helpers' structural `DBX`. */
  readonly db: PgDatabase<PgQueryResultHKT>
  /** Runs SQL (several statements allowed). */
  exec: (sql: string) => Promise<void>
  /** PostgreSQL only: the server's connection string and the schema the tests' tables live in. */
  readonly url?: string
  readonly schema?: string
  close: () => Promise<void>
}

/** A tap test, as the callbacks of `t.test` receive it. */
export type TapTest = Parameters<Parameters<typeof tap.test>[0]>[0]

const START_TIMEOUT_MS = 30_000
const STOP_TIMEOUT_MS = 10_000

/** The directory of `initdb` and `postgres`: $PG_BIN, else the newest /usr/lib/postgresql/<version>/bin. */
export function postgresBin(): string | undefined {
  const has = (dir: string) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres'))
  if (process.env.PG_BIN) return has(process.env.PG_BIN) ? process.env.PG_BIN : undefined
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a))
  return versions.map((version) => join(root, version, 'bin')).find(has)
}

/** Why the PostgreSQL half must skip on this machine, or false when it can run. */
export function postgresSkipReason(): string | false {
  if (process.env.DATABASE_URL) return false
  return postgresBin() ? false : 'no DATABASE_URL and no PostgreSQL binaries (initdb, postgres) installed'
}

/** PostgreSQL refuses to run as root: as root, run it as the `postgres` user (else `nobody`). */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const entries = readFileSync('/etc/passwd', 'utf8').split('\n').map((line) => line.split(':'))
  const entry = entries.find((fields) => fields[0] === 'postgres') ?? entries.find((fields) => fields[0] === 'nobody')
  if (!entry) throw new Error('running as root and no postgres or nobody user to run PostgreSQL as')
  return { uid: Number(entry[2]), gid: Number(entry[3]) }
}

function run(command: string, args: string[], user: { uid: number; gid: number } | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...user })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.once('error', reject)
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}:\n${output}`))))
  })
}

function launch(bin: string, dataDir: string, port: number, user: { uid: number; gid: number } | undefined): Promise<ChildProcess> {
  const args = ['-D', dataDir, '-k', dataDir, '-p', String(port), '-h', '127.0.0.1', '-F', '-c', 'full_page_writes=off']
  const child = spawn(join(bin, 'postgres'), args, { stdio: ['ignore', 'pipe', 'pipe'], ...user })
  return new Promise((resolve, reject) => {
    let output = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`postgres did not start on port ${port} within ${START_TIMEOUT_MS}ms:\n${output}`))
    }, START_TIMEOUT_MS)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes('ready to accept connections')) {
        clearTimeout(timer)
        child.stderr?.off('data', onData)
        child.stderr?.resume()
        child.removeAllListeners('exit')
        resolve(child)
      }
    }
    child.stdout?.resume()
    child.stderr?.on('data', onData)
    child.once('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`postgres exited with code ${code} before it was ready:\n${output}`))
    })
  })
}

export interface PostgresServer {
  url: string
  stop: () => Promise<void>
  /** SIGSTOP / SIGCONT to the postmaster and every backend: the server stalls, then goes on. */
  pause: () => void
  resume: () => void
}

/** The postmaster (its pid is the first line of postmaster.pid) and its children, read from /proc. */
function clusterPids(dataDir: string): number[] {
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
  const children = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces, so read after the last ')'.
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster
      } catch {
        return false
      }
    })
    .map(Number)
  return [postmaster, ...children]
}

/** A throwaway cluster: initdb into a temp directory, `postgres` on a free loopback port, removed on stop. */
export async function startCluster(bin: string): Promise<PostgresServer> {
  const user = serverUser()
  const dir = mkdtempSync(join(tmpdir(), 'fastify-actions-pg-'))
  if (user) chownSync(dir, user.uid, user.gid)
  const dataDir = join(dir, 'data')
  const cleanup = () => rmSync(dir, { recursive: true, force: true })
  let child: ChildProcess | undefined
  let port = 0
  try {
    await run(join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync'], user)
    for (let attempt = 0; child === undefined; attempt++) {
      port = await freePort()
      try {
        child = await launch(bin, dataDir, port, user)
      } catch (error) {
        if (attempt >= 2) throw error // another process took the port between the probe and the start
      }
    }
  } catch (error) {
    cleanup()
    throw error
  }
  const server = child
  // If the test process dies first, do not leave the cluster behind.
  const onExit = () => {
    server.kill('SIGQUIT')
    cleanup()
  }
  process.once('exit', onExit)
  let stopped: Promise<void> | undefined
  const signalAll = (signal: NodeJS.Signals) => {
    if (!existsSync(join(dataDir, 'postmaster.pid'))) return // stopped already
    for (const pid of clusterPids(dataDir)) {
      try {
        process.kill(pid, signal)
      } catch {
        // A backend that ended between the listing and the signal.
      }
    }
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    pause: () => signalAll('SIGSTOP'),
    resume: () => signalAll('SIGCONT'),
    stop() {
      stopped ??= (async () => {
        process.off('exit', onExit)
        if (server.exitCode === null && server.signalCode === null) {
          const exited = once(server, 'exit')
          server.kill('SIGINT') // fast shutdown
          const timer = setTimeout(() => server.kill('SIGKILL'), STOP_TIMEOUT_MS)
          await exited
          clearTimeout(timer)
        }
        cleanup()
      })()
      return stopped
    },
  }
}

/** One new in-memory PGlite with Drizzle on it (from a kept fresh cluster: test/helpers/pglite.ts). */
export async function openPglite(): Promise<TestDatabase> {
  const client = await freshPglite()
  return {
    kind: 'pglite',
    db: drizzlePglite({ client }),
    exec: async (sql) => void (await client.exec(sql)),
    close: () => client.close(),
  }
}

/**
 * PostgreSQL through `pg`: the server at DATABASE_URL, else a throwaway cluster. Everything the
 * tests create lives in a schema of its own, dropped on close, so a real database is left as it was.
 */
export async function openPostgres(): Promise<TestDatabase> {
  const bin = postgresBin()
  const server: PostgresServer | undefined = process.env.DATABASE_URL ? undefined : bin ? await startCluster(bin) : undefined
  const url = process.env.DATABASE_URL ?? server?.url
  if (!url) throw new Error(postgresSkipReason() || 'no PostgreSQL')
  const schema = `fastify_actions_test_${process.pid}_${Date.now()}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`CREATE SCHEMA "${schema}"`)
  const pool = new pg.Pool({ connectionString: url, max: 4, options: `-c search_path=${schema}` })
  pool.on('error', () => {}) // an idle client dropped by a stopped server is not a test failure
  return {
    kind: 'postgres',
    db: drizzlePg({ client: pool }),
    url,
    schema,
    exec: async (sql) => void (await pool.query(sql)),
    async close() {
      await pool.end()
      await admin.query(`DROP SCHEMA "${schema}" CASCADE`)
      await admin.end()
      await server?.stop()
    },
  }
}

/**
 * Runs one test body on both databases: PGlite always, PostgreSQL when DATABASE_URL is set or the
 * binaries are installed (skipped with the reason otherwise). `setup` SQL runs once on each.
 */
export function onBothDatabases(t: TapTest, setup: string, body: (t: TapTest, database: TestDatabase) => Promise<void>): void {
  const open = async (t: TapTest, opener: () => Promise<TestDatabase>) => {
    const database = await opener()
    t.teardown(() => database.close())
    if (setup) await database.exec(setup)
    await body(t, database)
  }
  t.test('on PGlite', (t) => open(t, openPglite))
  const skip = postgresSkipReason()
  t.test('on PostgreSQL', skip ? { skip } : {}, (t) => open(t, openPostgres))
}
