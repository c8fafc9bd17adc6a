/**
 * The package the way a user gets it: `npm pack` (which runs `prepack`, the clean build), then the
 * tarball installed into an empty project beside the peers the README names, from the registry.
 * Done once per source state, shared by the test files that need it (a lock keeps
 * two files running at once from packing twice), and kept in the system temp dir between runs.
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** What the user installs beside the tarball: the peers (README) and a TypeScript toolchain. */
export const userInstall = ['fastify', 'typebox', 'drizzle-orm', 'typescript@5.9', '@types/node@20']

export interface PackedInstall {
  /** The temp project: package.json with "type": "module", node_modules with the tarball installed. */
  project: string
  tarball: string
  /** Paths inside the tarball, without the leading `package/`. */
  files: string[]
  /** The tarball's size in bytes. */
  size: number
  /** Milliseconds spent in `npm pack` and in `npm install`. */
  packMs: number
  installMs: number
  /** The Node major that ran the install, and the packages npm warned `EBADENGINE` about (`name@version`). */
  installNode: number
  engineWarnings: string[]
}

export interface RunResult {
  code: number | null
  stdout: string
  stderr: string
}

/**
 * The environment of a child: no npm lifecycle variables (from `npm test`), no NODE_OPTIONS
 * (tap's loaders), none of the machine's service settings (DATABASE_URL and the like), and the
 * running `node` first on PATH, so a Node 24 run packs, installs and runs everything on Node 24.
 */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(npm_|NODE_OPTIONS$|NODE_ENV$|TAP|_TAP)/i.test(name)) continue
    // The services of the machine running the tests (CI exports DATABASE_URL for its PostgreSQL): a
    // project started here sees a fresh shell's environment; a test that wants one passes it.
    if (/^(DATABASE_URL|REDIS_URL|PGLITE_DIR|JWT_SECRET|DISCOVERY_SECRET|PORT|HOST)$/.test(name)) continue
    env[name] = value
  }
  env.PATH = [dirname(process.execPath), process.env.PATH ?? ''].join(delimiter)
  env.npm_config_fund = 'false'
  env.npm_config_audit = 'false'
  env.npm_config_update_notifier = 'false'
  // Every install of the package tests (and `fastify-actions new`'s own) takes what npm's cache has
  // without asking the registry whether it changed: one request per package saved.
  env.npm_config_prefer_offline = 'true'
  return env
}

/** Runs a command to its end; never rejects (the caller asserts on the code and the output). */
export function run(command: string, args: string[], options: { cwd: string; timeout?: number }): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, env: cleanEnv(), timeout: options.timeout ?? 240_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0
        resolve({ code, stdout, stderr })
      },
    )
  })
}

/** Runs a command and rejects with its output when it fails. */
async function mustRun(command: string, args: string[], cwd: string): Promise<RunResult> {
  const result = await run(command, args, { cwd })
  if (result.code !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed (${result.code}) in ${cwd}\n${result.stdout}\n${result.stderr}`)
  }
  return result
}

async function listFiles(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return []
  const out: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(join(entry.parentPath, entry.name))
  }
  return out
}

/**
 * A hash of everything that goes into the tarball. Not the Node version: the tarball is the same
 * bytes whichever Node packs it, and the installs build nothing native, so CI's runs on Node 24
 * and 26 reuse the first run's pack and installs (every program still runs on the running Node).
 */
async function sourceKey(): Promise<string> {
  const hash = createHash('sha256')
  const top = ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'README.md', 'LICENSE', 'CHANGELOG.md']
  const files = [...top.map((f) => join(repoRoot, f)), ...(await listFiles(join(repoRoot, 'lib'))), ...(await listFiles(join(repoRoot, 'plugins'))), ...(await listFiles(join(repoRoot, 'template')))]
  for (const file of files.sort()) {
    if (!existsSync(file)) continue
    hash.update(relative(repoRoot, file)).update('\0').update(await readFile(file)).update('\0')
  }
  return hash.digest('hex').slice(0, 16)
}

const cachePrefix = 'fastify-actions-pack-'
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Removes cached installs of other source states once they are an hour old. */
async function pruneOld(keep: string): Promise<void> {
  for (const name of await readdir(tmpdir())) {
    if (!name.startsWith(cachePrefix) || name.startsWith(keep)) continue
    const path = join(tmpdir(), name)
    const info = await stat(path).catch(() => undefined)
    if (info && Date.now() - info.mtimeMs > 3_600_000) await rm(path, { recursive: true, force: true })
  }
}

async function build(dir: string): Promise<PackedInstall> {
  await rm(dir, { recursive: true, force: true })
  const packDir = join(dir, 'tarball')
  const project = join(dir, 'project')
  await mkdir(packDir, { recursive: true })
  await mkdir(project, { recursive: true })

  let started = Date.now()
  const packed = await mustRun('npm', ['pack', '--json', '--pack-destination', packDir], repoRoot)
  const packMs = Date.now() - started
  // prepack's output comes before the JSON on stdout.
  const json = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('[\n'))) as Array<{ filename: string; size: number; files: Array<{ path: string }> }>
  const info = json[0]!
  const tarball = join(packDir, info.filename)

  started = Date.now()
  await mustRun('npm', ['init', '-y'], project)
  const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as Record<string, unknown>
  await writeFile(join(project, 'package.json'), JSON.stringify({ ...manifest, type: 'module' }, null, 2) + '\n')
  const installed = await mustRun('npm', ['install', tarball, ...userInstall, '--prefer-offline'], project)
  const installMs = Date.now() - started
  const engineWarnings = [...new Set([...installed.stderr.matchAll(/EBADENGINE +package: '([^']+)'/g)].map((m) => m[1]!))].sort()
  const installNode = Number(process.versions.node.split('.')[0])
  return { project, tarball, files: info.files.map((f) => f.path), size: info.size, packMs, installMs, installNode, engineWarnings }
}

/** A lock whose process has ended, or that has no owner after a minute, or older than 10 minutes. */
async function lockIsStale(lock: string): Promise<boolean> {
  const info = await stat(lock).catch(() => undefined)
  if (!info) return false
  const age = Date.now() - info.mtimeMs
  const pid = Number(await readFile(join(lock, 'pid'), 'utf8').catch(() => ''))
  if (!pid) return age > 60_000
  try {
    process.kill(pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return true
  }
  return age > 600_000
}

/**
 * Runs `build` once per cache folder across test files running at once: the first file takes the
 * lock (a folder holding its pid), the others wait for `ready.json`; a lock whose process has ended
 * is taken over. What `build` returns is written to `ready.json` and returned to every caller.
 */
async function once<T>(dir: string, lock: string, build: () => Promise<T>): Promise<T> {
  const ready = join(dir, 'ready.json')
  for (const deadline = Date.now() + 600_000; Date.now() < deadline; ) {
    if (existsSync(ready)) return JSON.parse(await readFile(ready, 'utf8')) as T
    try {
      await mkdir(lock)
      await writeFile(join(lock, 'pid'), String(process.pid))
    } catch {
      // Another test file is building: wait for it, unless its process is gone (killed at a timeout).
      if (await lockIsStale(lock)) await rm(lock, { recursive: true, force: true })
      else await sleep(1000)
      continue
    }
    try {
      // It may have been finished between the check above and taking the lock.
      if (existsSync(ready)) return JSON.parse(await readFile(ready, 'utf8')) as T
      const result = await build()
      await writeFile(ready, JSON.stringify(result, null, 2))
      return result
    } finally {
      await rm(lock, { recursive: true, force: true })
    }
  }
  throw new Error(`timed out waiting for ${lock}`)
}

let memo: Promise<PackedInstall> | undefined

/** The packed and installed package for the current sources (built on first use, then reused). */
export function packAndInstall(): Promise<PackedInstall> {
  memo ??= (async () => {
    const key = await sourceKey()
    const dir = join(tmpdir(), cachePrefix + key)
    await pruneOld(cachePrefix + key)
    // One lock for every source state: two packs at once would share (and delete) the repo's dist/.
    return once(dir, join(tmpdir(), 'fastify-actions-pack.lock'), () => build(dir))
  })()
  return memo
}

export interface FrontendInstall {
  /** A project with only `npm install <tarball>` done: what a front end that uses the client has. */
  project: string
  /** The top-level packages npm installed. */
  packages: string[]
  installMs: number
}

let frontendMemo: Promise<FrontendInstall> | undefined

/**
 * A front end's install of the packed tarball, beside the server's packed project: `npm install
 * <tarball>` and nothing else, as docs/client.md says (the optional peers fastify and drizzle-orm
 * stay out; npm adds the one required peer, typebox). Once per source state, shared by test files.
 */
export function frontendInstall(): Promise<FrontendInstall> {
  frontendMemo ??= (async () => {
    const packed = await packAndInstall()
    const dir = join(dirname(packed.project), 'frontend')
    return once(dir, join(dirname(packed.project), 'frontend.lock'), async () => {
      const project = join(dir, 'project')
      await rm(project, { recursive: true, force: true })
      await mkdir(project, { recursive: true })
      await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'client-app', private: true, type: 'module' }, null, 2) + '\n')
      const started = Date.now()
      await mustRun('npm', ['install', packed.tarball, '--prefer-offline'], project)
      const installMs = Date.now() - started
      const packages = (await readdir(join(project, 'node_modules'), { withFileTypes: true }))
        .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
        .flatMap((entry) => entry.name)
      const scoped: string[] = []
      for (const name of packages.filter((n) => n.startsWith('@'))) {
        for (const inner of await readdir(join(project, 'node_modules', name))) scoped.push(`${name}/${inner}`)
      }
      return { project, packages: [...packages.filter((n) => !n.startsWith('@')), ...scoped].sort(), installMs }
    })
  })()
  return frontendMemo
}

/** The repo's own bin (publint, attw), run on the running Node. */
export function repoBin(name: string): string {
  return join(repoRoot, 'node_modules', '.bin', name)
}

/**
 * .ci/run runs the suite on three Node versions; the second and third runs set
 * FASTIFY_ACTIONS_REPEAT_RUN=1. What does not depend on the runtime (a compiler's verdict on the
 * packed declarations and the docs samples, publint and attw on the tarball, the pages' links, the
 * scaffold's install) is checked on the first run only: a tap `skip` reason, or false to run.
 */
export const oncePerCi: string | false =
  process.env.FASTIFY_ACTIONS_REPEAT_RUN === '1' ? 'does not depend on the Node runtime: .ci/run checks it on its first Node only' : false
