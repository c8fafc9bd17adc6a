/**
 * The example app (what `npm start` serves), built in-process on an in-memory PGlite, for the tests
 * that hand its OpenAPI document to tools nobody here wrote (linters, client generators), and the
 * way those tools are run: `node_modules/.bin`, execFile with a bounded timeout, no network.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { RestServerInstance } from '../../lib/index.js'
import type { TapTest } from './postgres.js'
import { examplePglite } from './pglite.js'

export const root = fileURLToPath(new URL('../..', import.meta.url))

/** A tool of `node_modules/.bin`. */
export const bin = (name: string) => join(root, 'node_modules/.bin', name)

/** The tools' environment: no telemetry, no update checks, no colours in what the tests read. */
export const toolEnv: NodeJS.ProcessEnv = {
  ...process.env,
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_NOTIFICATIONS: 'true',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  NO_COLOR: '1',
  FORCE_COLOR: '0',
}

export interface Ran {
  code: number
  stdout: string
  stderr: string
}

/** Runs a file with its arguments, at most `timeout` ms (then it is killed); resolves with its exit code, never rejects. */
export function run(file: string, args: string[], options: { cwd?: string; timeout?: number; env?: NodeJS.ProcessEnv } = {}): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: options.cwd ?? root, timeout: options.timeout ?? 60_000, env: options.env ?? toolEnv, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
      resolve({ code, stdout: String(stdout), stderr: error && typeof error.code !== 'number' ? `${String(stderr)}\n${error.message}` : String(stderr) })
    })
  })
}

/** A scratch folder under test/ (so generated code resolves this repository's node_modules), removed at teardown. */
export function scratch(t: TapTest, name: string): string {
  const dir = mkdtempSync(join(root, `test/.${name}-`))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

export interface ExampleApp {
  app: NonNullable<RestServerInstance['rest']>['app']
  document: Record<string, any>
}

/**
 * The example's services and surfaces without its database (example/contract.config.ts, what
 * `fastify-actions contract` reads: the same document as the app's, at a third of the app's boot),
 * discovery on, listening on a loopback port, for the tests that call it through generated clients
 * (`greetings.*` use no database). Closed at teardown.
 */
export async function exampleServer(t: TapTest, options: { version?: '3.1' | '3.2' } = {}): Promise<ExampleApp & { origin: string }> {
  const [{ default: config }, { createServer }] = await Promise.all([import('../../example/contract.config.js'), import('../../lib/index.js')])
  const rest = config.rest!
  const server = await createServer({
    ...config,
    logServices: false,
    forceNewInstance: true,
    rest: { ...rest, host: '127.0.0.1', discovery: { enabled: true }, openapi: { ...rest.openapi, version: options.version ?? '3.1' } },
  })
  t.teardown(() => server.close())
  const app = server.rest!.app
  await app.listen({ host: '127.0.0.1', port: 0 })
  const response = await app.inject({ method: 'GET', url: '/api/openapi.json' })
  if (response.statusCode !== 200) throw new Error(`the example's document answered ${response.statusCode}`)
  const { port } = app.server.address() as AddressInfo
  return { app, origin: `http://127.0.0.1:${port}`, document: response.json() }
}

/**
 * The example app (what `npm start` serves, on an in-memory PGlite) with its OpenAPI document
 * (`version` 3.1 by default: the app's `OPENAPI_VERSION` setting), not listening. Closed at teardown.
 */
export async function exampleApp(t: TapTest, options: { version?: '3.1' | '3.2' } = {}): Promise<ExampleApp> {
  const { createExample } = await import('../../example/app.js')
  const attachments = mkdtempSync(join(tmpdir(), 'fastify-actions-openapi-'))
  t.teardown(() => rmSync(attachments, { recursive: true, force: true }))
  const example = await createExample({
    PORT: '0',
    HOST: '127.0.0.1',
    PGLITE_DIR: 'memory://',
    JWT_SECRET: 'openapi-tools-test-secret-of-32-bytes-or-more',
    ATTACHMENTS_DIR: attachments,
    ...(options.version ? { OPENAPI_VERSION: options.version } : {}),
  }, { database: await examplePglite() })
  t.teardown(() => example.close())
  const app = example.server.rest!.app
  const response = await app.inject({ method: 'GET', url: '/api/openapi.json' })
  if (response.statusCode !== 200) throw new Error(`the example's document answered ${response.statusCode}`)
  return { app, document: response.json() }
}

export interface RedoclyReport {
  totals: { errors: number; warnings: number; ignored?: number }
  problems: Array<{ ruleId: string; severity: string; message: string }>
}

/** `redocly lint --extends recommended`, its JSON report (a `no-report` problem when it gave none). */
export async function redocly(file: string): Promise<RedoclyReport> {
  const ran = await run(bin('redocly'), ['lint', file, '--extends', 'recommended', '--format', 'json'], { timeout: 90_000 })
  try {
    return JSON.parse(ran.stdout) as RedoclyReport
  } catch {
    return { totals: { errors: -1, warnings: -1 }, problems: [{ ruleId: 'no-report', severity: 'error', message: `exit ${ran.code}: ${ran.stderr.slice(-2000)}` }] }
  }
}

export interface SpectralResult {
  code: string
  /** 0 error, 1 warning, 2 information, 3 hint. */
  severity: number
  message: string
  path: string[]
}

/** `spectral lint` with `extends: ["spectral:oas"]`, its JSON results (a `no-report` error when it gave none). */
export async function spectral(dir: string, file: string): Promise<SpectralResult[]> {
  const ruleset = join(dir, '.spectral.yaml')
  writeFileSync(ruleset, 'extends: ["spectral:oas"]\n')
  const output = `${file}.spectral.json`
  const ran = await run(bin('spectral'), ['lint', file, '--ruleset', ruleset, '--format', 'json', '--output', output, '--fail-severity', 'hint'], { timeout: 90_000 })
  try {
    return JSON.parse(readFileSync(output, 'utf8')) as SpectralResult[]
  } catch {
    return [{ code: 'no-report', severity: 0, message: `exit ${ran.code}: ${ran.stderr.slice(-2000)}`, path: [] }]
  }
}

/** The problems of a report as `rule: message` lines, to read in a failed assertion. */
export const summary = (problems: Array<{ ruleId?: string; code?: string; message: string }>) => problems.map((problem) => `${problem.ruleId ?? problem.code}: ${problem.message}`)
