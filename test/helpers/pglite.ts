import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { createRequire } from 'node:module'
import { PGlite } from '@electric-sql/pglite'
import { drizzle } from 'drizzle-orm/pglite'
import type { Database } from '../../example/db.js'

/**
 * A new, empty in-memory PGlite, like `PGlite.create()`, without running `initdb` each time.
 *
 * `PGlite.create()` makes a fresh cluster (initdb) every time: 3 to 6 s of CPU, and the suite makes
 * dozens. The files of one fresh cluster are kept under the OS's temporary folder (one file per PGlite
 * version, made by whichever test process needs it first, written to a temporary name and renamed,
 * so processes running side by side never read half a file); every caller loads its own copy into
 * memory (about 1 s of CPU). Each database is still its own: nothing a test writes reaches the file.
 * A file that does not load (cut short, another version's) is removed and the cluster made anew.
 */
export async function freshPglite(): Promise<PGlite> {
  const file = join(tmpdir(), `fastify-actions-test-pglite-${pgliteVersion()}.tar`)
  if (existsSync(file)) {
    try {
      return await PGlite.create({ loadDataDir: new Blob([readFileSync(file)]) })
    } catch {
      rmSync(file, { force: true })
    }
  }
  const client = await PGlite.create()
  const dump = await client.dumpDataDir('none')
  const partial = `${file}.${process.pid}.partial`
  writeFileSync(partial, Buffer.from(await dump.arrayBuffer()))
  renameSync(partial, file)
  return client
}

function pgliteVersion(): string {
  const require = createRequire(import.meta.url)
  // The package's exports do not list package.json: read it beside the entry point's folder.
  let dir = dirname(require.resolve('@electric-sql/pglite'))
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir)
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version
}

/** The example's database (example/db.ts's `Database`) on a new in-memory PGlite: `createExample(settings, { database })`. */
export async function examplePglite(): Promise<Database> {
  const client = await freshPglite()
  return { db: drizzle({ client }), description: 'PGlite in memory://', close: () => client.close() }
}
