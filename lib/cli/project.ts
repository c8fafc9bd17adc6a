/** The project a command runs in: its root, its own packages (resolved from there) and its config. */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { consoleToStderr } from './console.js'
import { CliError } from './errors.js'
import type { Values } from './package.js'

interface Manifest {
  name?: string
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
  exports?: unknown
  main?: string
}

function readManifest(file: string): Manifest | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Manifest
  } catch {
    return undefined
  }
}

/** The nearest folder at or above `from` whose package.json depends on fastify-actions. */
export function findProjectRoot(from: string = process.cwd()): string {
  const start = resolve(from)
  for (let dir = start; ; dir = dirname(dir)) {
    const manifest = readManifest(join(dir, 'package.json'))
    // fastify-actions' own folder counts only when the command runs in it (its example app), never from below.
    if (manifest && (manifest.dependencies?.['fastify-actions'] || manifest.devDependencies?.['fastify-actions'] || (dir === start && isThisPackage(manifest)))) return dir
    if (dirname(dir) === dir) break
  }
  throw new CliError('not in a fastify-actions project: no package.json with fastify-actions as a dependency here or above')
}

/** The `import` (else `default`) target of one `exports` entry. */
function pickTarget(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry
  if (entry && typeof entry === 'object') {
    for (const condition of ['import', 'node', 'default']) {
      const target = pickTarget((entry as Record<string, unknown>)[condition])
      if (target) return target
    }
  }
  return undefined
}

/** `exports` of a package for a subpath (`.`, `./esm/api`, `./server/stdio.js` through `./*`). */
function resolveExports(exports: unknown, subpath: string): string | undefined {
  if (typeof exports === 'string' || (exports && typeof exports === 'object' && !Object.keys(exports).some((key) => key.startsWith('.')))) {
    return subpath === '.' ? pickTarget(exports) : undefined
  }
  const map = (exports ?? {}) as Record<string, unknown>
  if (Object.hasOwn(map, subpath)) return pickTarget(map[subpath])
  for (const [key, value] of Object.entries(map)) {
    const star = key.indexOf('*')
    if (star < 0) continue
    const head = key.slice(0, star)
    const tail = key.slice(star + 1)
    if (subpath.startsWith(head) && subpath.endsWith(tail) && subpath.length >= head.length + tail.length) {
      const target = pickTarget(value)
      if (target) return target.replace('*', subpath.slice(head.length, subpath.length - tail.length))
    }
  }
  return undefined
}

/**
 * The file URL ESM resolution gives `specifier` imported from the project's root: the project's
 * own copy of a package (its `import` condition), never the CLI's.
 */
export function resolveFromProject(root: string, specifier: string): string {
  const parts = specifier.split('/')
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
  const subpath = specifier === name ? '.' : `./${specifier.slice(name.length + 1)}`
  for (let dir = root; ; dir = dirname(dir)) {
    const folder = join(dir, 'node_modules', name)
    const manifest = readManifest(join(folder, 'package.json'))
    if (manifest) {
      const target = manifest.exports !== undefined ? resolveExports(manifest.exports, subpath) : subpath === '.' ? (manifest.main ?? 'index.js') : subpath
      if (!target) break
      return pathToFileURL(join(folder, target)).href
    }
    if (dirname(dir) === dir) break
  }
  throw new CliError(`cannot find ${specifier} in this project: run npm install (${name} must be in its dependencies)`)
}

/** fastify-actions' own repository is a project too (its example app imports the library from source). */
function isThisPackage(manifest: Manifest): boolean {
  return manifest.name === 'fastify-actions'
}

/** Imports a module the way the project itself would; in fastify-actions' own repository, the library is this copy. */
export async function importFromProject<T>(root: string, specifier: string): Promise<T> {
  if (specifier === 'fastify-actions' && isThisPackage(readManifest(join(root, 'package.json')) ?? {})) return (await import(new URL('../index.js', import.meta.url).href)) as T
  return (await import(resolveFromProject(root, specifier))) as T
}

let tsxRegistered = false

/**
 * Whether the config may be loaded from a kept bundle (lib/cli/config-cache.ts): only where the
 * project's own fastify-actions is plain JavaScript (an installed package), so that the bundle's
 * imports need no tsx; fastify-actions' own repository imports the library from source.
 */
function mayCompile(root: string): boolean {
  if (isThisPackage(readManifest(join(root, 'package.json')) ?? {})) return false
  try {
    return /\.(m|c)?js$/.test(resolveFromProject(root, 'fastify-actions'))
  } catch {
    return false
  }
}

/**
 * Loads the project's config module (`src/config.ts` unless `--config`) and answers its default
 * export: through the project's own tsx, or with `compiled`, from a bundle kept between starts
 * (lib/cli/config-cache.ts) when the project allows it, tsx otherwise.
 */
export async function loadConfig(root: string, configOption: string | undefined, options: { compiled?: boolean } = {}): Promise<Record<string, unknown>> {
  const file = resolve(root, configOption ?? join('src', 'config.ts'))
  if (!existsSync(file)) throw new CliError(`config file not found: ${configOption ?? 'src/config.ts'}`)
  let url: string | undefined
  if (options.compiled && mayCompile(root)) {
    const { compiledConfig } = await import('./config-cache.js')
    url = await compiledConfig(root, file, resolveFromProject(root, 'tsx/esm/api')).then(
      (compiled) => compiled.url,
      (error: unknown) => void console.error(`[config] compiling ${configOption ?? 'src/config.ts'} failed, loading it through tsx: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`),
    )
  }
  if (!url && !tsxRegistered) {
    const tsx = await importFromProject<{ register: () => unknown }>(root, 'tsx/esm/api')
    tsx.register()
    tsxRegistered = true
  }
  const module = (await import(url ?? pathToFileURL(file).href)) as { default?: unknown }
  const config = module.default
  if (!config || typeof config !== 'object' || !Array.isArray((config as { services?: unknown }).services)) {
    throw new CliError(`${configOption ?? 'src/config.ts'} must export the server config (with services) as its default export`)
  }
  return config as Record<string, unknown>
}

/** A project a command runs in: its root, and its config module, loaded once when first asked for. */
export interface Project {
  readonly root: string
  config(): Promise<Record<string, unknown>>
}

/**
 * Every project command's preamble (list, openapi, contract, diff, mcp, gen): the project's root,
 * console lines sent to stderr (stdout is the command's output), and its config module, loaded
 * through the project's own tsx when the command first asks for it (diff reads its snapshot first).
 */
export function openProject(values: Values, options: { compiled?: boolean } = {}): Project {
  const root = findProjectRoot()
  consoleToStderr()
  let config: Promise<Record<string, unknown>> | undefined
  return { root, config: () => (config ??= loadConfig(root, values.config as string | undefined, options)) }
}

/** One action of the server's table, as the CLI reads it (lib/registry.ts's CompiledAction). */
export interface TableEntry {
  serviceName: string
  action: {
    name: string
    description?: string
    isProtected?: boolean
    accessControl?: string[]
    isSpecial?: unknown
    output?: unknown
    deprecated?: { since: string; sunset?: string; replacement?: string; message?: string }
  }
  visible: boolean
  route: string
}

/** What the server resolved, as the CLI reads it: `getActions(app)` of the project's own library. */
export interface ResolvedProject {
  engine: { table: { entries: readonly TableEntry[] } }
  config: { rest?: { baseUrl: string; actionRoutes: boolean; bodyLimit: number; mcp?: { path: string }; openapi?: { path: string } } }
}

type InjectApp = { inject: (options: Record<string, unknown>) => Promise<{ statusCode: number; body: string; headers: Record<string, unknown>; stream: () => import('node:stream').Readable }> }

/** The project's own fastify-actions, where createServer and the config's services come from. */
export interface ProjectLibrary {
  createServer: (config: Record<string, unknown>) => Promise<{ rest?: { app: InjectApp }; context: unknown; close: () => Promise<void> }>
  getActions: (app: never) => ResolvedProject | undefined
}

/**
 * Builds the project's server without listening: no service table, a fresh instance, and no
 * `onBoot` (no migrations) unless `boot`. `rest` defaults to what `list`, `openapi` and `mcp` need.
 */
export async function buildProjectServer(
  root: string,
  config: Record<string, unknown>,
  rest: (rest: Record<string, any>) => Record<string, unknown>,
  options: { boot?: boolean } = {},
) {
  const library = await importFromProject<ProjectLibrary>(root, 'fastify-actions')
  const server = await library.createServer({
    ...config,
    onBoot: options.boot ? config.onBoot : undefined,
    logServices: false,
    forceNewInstance: true,
    rest: rest((config.rest as Record<string, any> | undefined) ?? {}),
  })
  if (!server.rest) throw new CliError('the server has no REST interface')
  const app = server.rest.app
  const resolved = library.getActions(app as never)
  if (!resolved?.config.rest) throw new CliError('the server has no REST interface')
  // Routes, the base URL and the MCP path as the server mounted them, never derived again here.
  return { server, app, resolved: resolved as ResolvedProject & { config: { rest: NonNullable<ResolvedProject['config']['rest']> } } }
}
