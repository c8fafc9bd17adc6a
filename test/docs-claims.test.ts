/**
 * The docs do not claim what the code contradicts, where a program can tell:
 * - the built-in routes listed in docs/endpoint.md are the routes a server with every optional
 *   concern on registers (read with an `onRoute` hook), no more and no fewer;
 * - every configuration path the pages name (`rest.openapi.reference.path`, `auth.cookieName`, the
 *   option tables of docs/server.md and of each concern's page) is a property of `ServerConfig`
 *   (read with the TypeScript compiler from lib/, so a renamed or removed option fails here), and
 *   every option has its row (a new option without docs fails too);
 * - the field tables of docs/actions-and-services.md are the properties of `Service` and `Action`.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Fastify from 'fastify'
import t from 'tap'
import ts from 'typescript'
import { createAction, DEFAULTS, fastifyActions, Ok } from '../lib/index.js'
import { everyOptionConfig } from './helpers/every-option.js'
import { oncePerCi } from './helpers/pack.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const page = (name: string) => readFile(join(root, 'docs', name), 'utf8')
const cells = (line: string) => line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((cell) => cell.trim())

/** The first-column cells of the markdown table that follows `heading`. */
function tableAfter(markdown: string, heading: string): string[] {
  const lines = markdown.split('\n')
  const start = lines.findIndex((line) => line.trim() === heading)
  if (start === -1) return []
  const first = lines.findIndex((line, index) => index > start && line.trim().startsWith('|'))
  const rows: string[] = []
  for (let index = first + 2; index < lines.length && lines[index]!.trim().startsWith('|'); index++) rows.push(cells(lines[index]!)[0]!)
  return rows
}

t.test('docs/endpoint.md lists exactly the built-in routes of a server with every option on', async (t) => {
  const staticDir = await mkdtemp(join(tmpdir(), 'docs-claims-'))
  t.teardown(() => rm(staticDir, { recursive: true, force: true }))
  const ping = createAction({ name: 'ping', description: 'Answers pong', handler: () => Ok({ pong: true }) })
  const app = Fastify()
  const registered = new Set<string>()
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) registered.add(`${method} ${route.url}`)
  })
  await app.register(fastifyActions, everyOptionConfig({ serverName: 'everything', services: [{ name: 'health', description: 'Health', actions: [ping] }], staticDir }))
  await app.ready()
  t.teardown(() => app.close())

  const markdown = await page('endpoint.md')
  t.match(markdown, /Every `GET` route answers `HEAD` too\./, 'the page says GET routes answer HEAD')
  const documented = new Set<string>()
  for (const cell of tableAfter(markdown, '## Built-in routes')) {
    for (const [, span] of cell.matchAll(/`([^`]+)`/g)) {
      const [method, path] = span!.split(' ')
      const url = path!.replace('{baseUrl}', '/api').replace('{service}', 'health').replace('{action}', 'ping')
      documented.add(`${method} ${url}`)
      if (method === 'GET') documented.add(`HEAD ${url}`)
    }
  }
  t.ok(documented.size >= 10, `${documented.size} documented method and path pairs`)
  t.same([...documented].filter((route) => !registered.has(route)).sort(), [], 'every documented route is registered')
  t.same([...registered].filter((route) => !documented.has(route)).sort(), [], 'every registered route is documented')
})

/** Every property path of a type, as `a.b.c`; under an index signature or `unknown`, any name is a path (`*`). */
function propertyPaths(checker: ts.TypeChecker, type: ts.Type, prefix: string, paths: Set<string>, depth = 0): void {
  if (depth > 6) return
  const members = type.isUnion() ? type.types : [type]
  for (const member of members) {
    if (member.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any)) paths.add(`${prefix}.*`)
    if (!(member.flags & (ts.TypeFlags.Object | ts.TypeFlags.Intersection))) continue
    if (member.flags & ts.TypeFlags.Object && checker.isArrayType(member)) {
      propertyPaths(checker, checker.getTypeArguments(member as ts.TypeReference)[0]!, prefix, paths, depth + 1)
      continue
    }
    if (member.getCallSignatures().length > 0) continue
    if (checker.getIndexInfosOfType(member).length > 0) paths.add(`${prefix}.*`)
    for (const symbol of checker.getPropertiesOfType(member)) {
      const path = prefix === '' ? symbol.name : `${prefix}.${symbol.name}`
      paths.add(path)
      const declaration = symbol.valueDeclaration ?? symbol.declarations?.[0]
      if (!declaration) continue
      propertyPaths(checker, checker.getNonNullableType(checker.getTypeOfSymbolAtLocation(symbol, declaration)), path, paths, depth + 1)
    }
  }
}

/** The type named `name` in a source file of the repository, with the checker that reads it. */
function typeOf(relativePath: string, name: string): { checker: ts.TypeChecker; type: ts.Type } {
  const file = join(root, relativePath)
  const program = ts.createProgram([file], { strict: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, skipLibCheck: true, noEmit: true })
  const checker = program.getTypeChecker()
  const declaration = program
    .getSourceFile(file)!
    .statements.find((node): node is ts.InterfaceDeclaration | ts.TypeAliasDeclaration => (ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) && node.name.text === name)
  if (!declaration) throw new Error(`${name} not found in ${relativePath}`)
  return { checker, type: checker.getTypeAtLocation(declaration.name) }
}

function configPaths(): Set<string> {
  const { checker, type } = typeOf('lib/server/config.ts', 'ServerConfig')
  const paths = new Set<string>()
  propertyPaths(checker, type, '', paths)
  return paths
}

t.test('docs/actions-and-services.md lists exactly the fields of Service and Action', { skip: oncePerCi }, async (t) => {
  const markdown = await page('actions-and-services.md')
  for (const [name, heading] of [['Service', '## Service fields'], ['Action', '## Action fields']] as const) {
    const { checker, type } = typeOf('lib/action.ts', name)
    const fields = checker.getPropertiesOfType(type).map((symbol) => symbol.name).sort()
    const documented = tableAfter(markdown, heading).flatMap((cell) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)).sort()
    t.ok(fields.length >= 4, `${name}: ${fields.length} fields`)
    t.same(documented, fields, `${heading} has one row per field of ${name}`)
  }
})

/** A documented path exists when it is a property path, or lies under one that takes any name. */
function exists(paths: Set<string>, path: string): boolean {
  if (paths.has(path)) return true
  const parts = path.split('.')
  for (let length = parts.length - 1; length >= 1; length--) if (paths.has(`${parts.slice(0, length).join('.')}.*`)) return true
  return false
}

/** Dotted names in the docs that are not configuration: `atFunction` values of diagnostics, a file name. */
const notConfig = new Set(['rest.errorHandler', 'rest.static', 'auth.ts'])

/** The entries of `DEFAULTS` (`rest.mcpPath`, …), which docs/server.md's defaults table names beside their config paths. */
function defaultsEntries(value: object, prefix = ''): string[] {
  return Object.entries(value).flatMap(([key, entry]) => {
    const path = prefix === '' ? key : `${prefix}.${key}`
    return typeof entry === 'object' && entry !== null && !Array.isArray(entry) ? defaultsEntries(entry, path) : [path]
  })
}

t.test('every configuration path the docs name is an option of ServerConfig', { skip: oncePerCi }, async (t) => {
  const paths = configPaths()
  t.ok(paths.has('rest.openapi.reference.path') && paths.has('auth.cookieName'), `${paths.size} paths read from ServerConfig`)

  const server = await page('server.md')
  const topLevel = tableAfter(server, '## ServerConfig').flatMap((cell) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!))
  const rest = tableAfter(server, '## RestConfig').flatMap((cell) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => `rest.${m[1]}`))
  t.ok(topLevel.length >= 10 && rest.length >= 15, `docs/server.md: ${topLevel.length} ServerConfig and ${rest.length} RestConfig rows`)
  for (const path of [...topLevel, ...rest]) t.ok(exists(paths, path), `docs/server.md: ${path} is an option`)
  // And the other way: no option is missing from its table.
  const childrenOf = (prefix: string) => [...paths].filter((path) => path.startsWith(prefix) && !path.slice(prefix.length).includes('.') && !path.endsWith('*'))
  t.same(childrenOf('').filter((key) => !topLevel.includes(key)), [], 'every option of ServerConfig has a row in docs/server.md')
  t.same(childrenOf('rest.').filter((key) => !rest.includes(key)), [], 'every option of RestConfig has a row in docs/server.md')

  // The option tables of the other pages: the first column, under the config path the heading names.
  const tables: Array<[page: string, heading: string, under: string]> = [
    ['auth.md', '## Options (`ServerConfig.auth`)', 'auth'],
    ['mcp.md', '## Options (`rest.mcp`)', 'rest.mcp'],
    ['openapi.md', '## Options: `rest.openapi`', 'rest.openapi'],
    ['rate-limiting.md', '## Options (`rest.rateLimiting`)', 'rest.rateLimiting'],
    ['uploads.md', '## Options (`rest.uploads`)', 'rest.uploads'],
    ['endpoint.md', '## Options', 'rest'],
    ['cors.md', '## Options', 'rest'],
    ['static-files.md', '## Options', ''],
  ]
  for (const [name, heading, under] of tables) {
    const options = tableAfter(await page(name), heading).flatMap((cell) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!))
    t.ok(options.length >= 3, `docs/${name}: ${options.length} options under ${heading}`)
    const documented = options.map((option) => (option.startsWith('rest.') || under === '' ? option : `${under}.${option}`))
    for (const path of documented) t.ok(exists(paths, path), `docs/${name}: ${path} is an option`)
    if (under !== '' && under !== 'rest') {
      const undocumented = childrenOf(`${under}.`).filter((key) => !documented.some((path) => path === key || path.startsWith(`${key}.`)))
      t.same(undocumented, [], `every option of ${under} has a row in docs/${name}`)
    }
  }

  // Every dotted path under rest., auth. or onBoot. on any page, outside code samples.
  const entries = new Set(defaultsEntries(DEFAULTS))
  const missing: string[] = []
  let seen = 0
  for (const name of (await readdir(join(root, 'docs'))).filter((file) => file.endsWith('.md')).sort()) {
    const prose = (await page(name)).replace(/^```[\s\S]*?^```/gm, '')
    for (const [, path] of prose.matchAll(/`((?:rest|auth|onBoot)(?:\.[A-Za-z]+)+)`/g)) {
      seen++
      if (notConfig.has(path!) || entries.has(path!)) continue
      if (!exists(paths, path!)) missing.push(`docs/${name}: ${path}`)
    }
  }
  t.ok(seen >= 50, `${seen} configuration paths named in the docs`)
  t.same([...new Set(missing)], [], 'each names an option that exists')
})
