/**
 * The surface table of docs/security.md ("Surfaces and the checks that apply"), tested as written:
 * for each check (a column) one hostile request, sent in the form of every surface (a row); a `yes`
 * cell must answer the column's refusal, a `no` cell must serve the request, `n/a` is skipped and
 * `pending` is a todo with its reason. A new surface is a new row in the doc and an adapter here;
 * a row without an adapter fails.
 */
import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { PassThrough } from 'node:stream'
import Fastify, { type FastifyInstance } from 'fastify'
import { createSigner } from 'fast-jwt'
import t, { type Test } from 'tap'
import { serveMcpOverStdio } from '../lib/cli/mcp.js'
import { createAction, Err, fastifyActions, getActions, messages, Ok, type Guard, type Service, type ServerConfig } from '../lib/index.js'
import { rawRequest, type RawAnswer } from './helpers/raw-http.js'
import { buildServer } from './helpers/server.js'

const SECRET = 'surfaces-test-secret-that-is-long-enough'
const DISCOVERY = 'discovery-secret-for-surfaces'
const BODY_LIMIT = 4096
const token = createSigner({ key: SECRET, expiresIn: 600_000 })({ sub: 'u-1' })

let runs = 0
const whoami = createAction({
  name: 'whoami',
  description: 'The caller',
  isProtected: true,
  handler: (_data, context) => {
    runs++
    return Ok({ userId: context.getAuth()?.userId ?? null })
  },
})
// The streams row: a protected streaming action (one event, then its final value).
const watch = createAction({
  name: 'watch',
  description: 'The caller, as a stream',
  isProtected: true,
  handler: async function* (_data, context) {
    runs++
    yield { userId: context.getAuth()?.userId ?? null }
    return { events: 1 }
  },
})
const acc: Service = { name: 'acc', description: 'Account', actions: [whoami, watch] }

// ---- the table ---------------------------------------------------------------------------------

type Cell = 'yes' | 'no' | 'n/a' | 'pending'
interface Row {
  surface: string
  cells: Record<string, { value: Cell; origin: boolean; result: boolean }>
}

function surfaceTable(): { checks: string[]; rows: Row[] } {
  const text = readFileSync(new URL('../docs/security.md', import.meta.url), 'utf8')
  const section = text.slice(text.indexOf('## Surfaces and the checks that apply'))
  // The first table of the section: from its first `|` line to the first line that is not one.
  const all = section.split('\n')
  const start = all.findIndex((line) => line.startsWith('|'))
  const end = all.findIndex((line, index) => index > start && !line.startsWith('|'))
  const lines = all.slice(start, end)
  const split = (line: string) => line.slice(1, -1).split('|').map((cell) => cell.trim())
  const [header, , ...body] = lines
  const checks = split(header!).slice(1)
  const rows = body.map((line) => {
    const [surface, ...values] = split(line)
    const cells: Row['cells'] = {}
    values.forEach((raw, index) => {
      const value = raw.split(' ')[0] as Cell
      if (!['yes', 'no', 'n/a', 'pending'].includes(value)) throw new Error(`docs/security.md: '${raw}' in row '${surface}' is not yes, no, n/a or pending`)
      cells[checks[index]!] = { value, origin: raw.includes('(Origin)'), result: raw.includes('(tool result)') }
    })
    return { surface: surface!, cells }
  })
  return { checks, rows }
}

// ---- the surfaces ------------------------------------------------------------------------------

interface Shot {
  headers: Record<string, string>
  /** A body over `rest.bodyLimit`. */
  big?: boolean
  /** List the actions (the discovery gate's business) instead of running one. */
  list?: boolean
  /** Leave the discovery secret out. */
  noSecret?: boolean
}

type Send = (port: number, shot: Shot) => Promise<RawAnswer>

const pad = (big?: boolean) => (big ? { pad: 'x'.repeat(BODY_LIMIT * 2) } : {})
const json = { 'content-type': 'application/json' }

function endpoint(port: number, shot: Shot) {
  const body = shot.list
    ? { intent: 'explore', service: '*', action: '*', payload: { ...(shot.noSecret ? {} : { discoverySecret: DISCOVERY }), ...pad(shot.big) } }
    : { intent: 'execute', service: 'acc', action: 'whoami', payload: pad(shot.big) }
  return rawRequest(port, { method: 'POST', path: '/api/services', headers: { ...json, ...shot.headers }, body: JSON.stringify(body) })
}

/** The MCP message of a shot: the same over HTTP and over stdio. */
function mcpMessage(shot: Shot) {
  return shot.list
    ? { jsonrpc: '2.0', id: 1, method: 'tools/list', params: pad(shot.big) }
    : { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'acc_whoami', arguments: pad(shot.big) } }
}

/** The app listening on each port `servers()` opened (the stdio row injects into the app the other rows reach by socket). */
const apps = new Map<number, FastifyInstance>()

/**
 * `fastify-actions mcp`'s serving (lib/cli/mcp.ts) run against the app over a pair of PassThrough
 * streams: the shot's message as one newline-delimited JSON line in, the one answer line out. Only
 * the token crosses from the shot (its `authorization` header, none without one): stdio has no
 * other header, no socket, no Host or Origin. A JSON-RPC answer carries no status: the status
 * reported is the one the endpoint answered the forwarded `app.inject` with (`onForwarded`), and the
 * message is the answer line's, so both are compared to the MCP over HTTP row's expectations.
 * Rate limit: a stdio message carries no limiting header, so every message is keyed by the address
 * `app.inject` gives it (127.0.0.1, `request.ip`) whatever the session; the
 * prime and the shot are two sessions on the same app, as two messages of one session would be.
 */
async function mcpOverStdio(port: number, shot: Shot): Promise<RawAnswer> {
  const app = apps.get(port)
  if (!app) throw new Error(`no app on port ${port}`)
  const input = new PassThrough()
  const output = new PassThrough()
  const statuses: number[] = []
  const token = shot.headers.authorization?.replace(/^Bearer /, '')
  // Everything written to `output`, once it ended (a write may still be on its way through the PassThrough when the serving settles).
  const written = new Promise<string>((resolve) => {
    let text = ''
    output.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve(text))
  })
  const serving = serveMcpOverStdio({ app, path: '/api/mcp', token, input, output, onForwarded: (_message, status) => statuses.push(status) })
  input.end(`${JSON.stringify(mcpMessage(shot))}\n`)
  await serving
  output.end()
  const lines = (await written).split('\n').filter(Boolean)
  if (lines.length !== 1 || statuses.length !== 1) throw new Error(`MCP over stdio: ${lines.length} answer lines, ${statuses.length} forwards`)
  const text = lines[0]!
  return { status: statuses[0]!, headers: { 'content-type': 'application/json' }, text, json: JSON.parse(text) }
}

function documentGet(path: string): Send {
  return (port, shot) => rawRequest(port, { path, headers: { ...(shot.noSecret ? {} : { 'x-discovery-secret': DISCOVERY }), ...shot.headers } })
}

const adapters: Record<string, { send: Send; plugin?: boolean } | undefined> = {
  'the endpoint': { send: endpoint },
  'per-action routes': {
    send: (port, shot) => rawRequest(port, { method: 'POST', path: '/api/services/acc/whoami', headers: { ...json, ...shot.headers }, body: JSON.stringify(pad(shot.big)) }),
  },
  // A streaming action's route with `Accept: text/event-stream` (the endpoint with the header takes the same dispatch).
  streams: {
    send: (port, shot) =>
      rawRequest(port, { method: 'POST', path: '/api/services/acc/watch', headers: { ...json, accept: 'text/event-stream', ...shot.headers }, body: JSON.stringify(pad(shot.big)) }),
  },
  'OpenAPI document': { send: documentGet('/api/openapi.json') },
  'reference page': { send: documentGet('/api/reference') },
  'MCP over HTTP': {
    send: (port, shot) => {
      const headers = { ...json, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...shot.headers }
      return rawRequest(port, { method: 'POST', path: '/api/mcp', headers, body: JSON.stringify(mcpMessage(shot)) })
    },
  },
  'MCP over stdio': { send: mcpOverStdio },
  'plugin mode': { send: endpoint, plugin: true },
}

/** Surfaces whose rows are filled in but which this test does not drive yet, and why (none today). */
const notDriven: Record<string, string> = {}

/** The adapter of a row: its surface name is the row's text before any parenthesis. */
function adapterOf(surface: string) {
  const name = surface.replace(/\s*\(.*$/, '')
  return { name, adapter: adapters[name] }
}

/** What a surface answered, normalised: the HTTP status and the refusal text (JSON-RPC tool errors included). */
function outcome(answer: RawAnswer): { status: number; message: string } {
  // A stream that started: served (its refusals are JSON envelopes, before the first byte).
  if (String(answer.headers['content-type']).startsWith('text/event-stream')) return { status: answer.status, message: 'served' }
  const body = answer.json
  if (body && typeof body.status === 'boolean') return { status: answer.status, message: body.status ? 'served' : body.message }
  if (body?.result?.isError) return { status: answer.status, message: body.result.content[0].text }
  if (body?.error) return { status: answer.status, message: body.error.message }
  return { status: answer.status, message: answer.status < 400 ? 'served' : answer.text.slice(0, 80) }
}

// ---- the servers -------------------------------------------------------------------------------

function config(extra: NonNullable<ServerConfig['rest']> | object = {}): ServerConfig {
  return {
    serverName: 'surfaces',
    logServices: false,
    services: [acc],
    auth: { secret: SECRET, method: 'both' },
    rest: {
      baseUrl: '/api',
      allowedOrigins: ['https://app.example'],
      discovery: { enabled: true, secret: DISCOVERY },
      openapi: { enabled: true },
      mcp: { enabled: true, requireAuth: true },
      bodyLimit: BODY_LIMIT,
      ...extra,
    },
  }
}

/** A createServer app and a plugin-mode app with the same configuration, both on 127.0.0.1. */
async function servers(t: Test, extra: object = {}, guard?: Guard): Promise<{ own: number; plugin: number }> {
  const server = await buildServer({ ...config(extra), forceNewInstance: true } as never)
  t.teardown(() => server.close())
  if (guard) server.addGuard({ service: 'acc' }, guard)
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  // Plugin mode takes the host app's own Fastify options (trustProxy among them).
  const host = Fastify((extra as { fastify?: object }).fastify ?? {})
  t.teardown(() => host.close())
  await host.register(fastifyActions, config(extra))
  if (guard) getActions(host).addGuard({ service: 'acc' }, guard)
  await host.listen({ port: 0, host: '127.0.0.1' })
  const own = (server.app.server.address() as AddressInfo).port
  const plugin = (host.server.address() as AddressInfo).port
  apps.set(own, server.app)
  apps.set(plugin, host)
  t.teardown(() => {
    apps.delete(own)
    apps.delete(plugin)
  })
  return { own, plugin }
}

// ---- the checks --------------------------------------------------------------------------------

interface Check {
  /** Server options the check needs on top of the shared configuration. */
  extra?: object
  shot: (port: number, surface: string) => Shot
  /** Sent once before the shot (the rate limit's first request). */
  prime?: boolean
  expected: { status: number; message: string | RegExp }
  /** The refusal of an `yes (Origin)` cell. */
  expectedOrigin?: { status: number; message: string }
  /** Waits until the server is in the state the check needs (load shedding). */
  ready?: (port: number) => Promise<void>
  /** A guard (`addGuard`) on the service of the actions the shots call. */
  guard?: Guard
}

const valid = (port: number) => ({ host: `localhost:${port}`, authorization: `Bearer ${token}` })

const checks: Record<string, Check> = {
  Auth: {
    shot: (port) => ({ headers: { host: `localhost:${port}` } }),
    expected: { status: 401, message: messages.authFailed(messages.authReasons.missingToken) },
  },
  CSRF: {
    shot: (port) => ({ headers: { host: `localhost:${port}`, cookie: `auth_token=${token}`, origin: 'https://evil.example' } }),
    expected: { status: 401, message: messages.authFailed(messages.authReasons.crossSite) },
    expectedOrigin: { status: 403, message: messages.originNotAllowed },
  },
  'Host/Origin': {
    shot: (port) => ({ headers: { ...valid(port), host: 'attacker.example' } }),
    expected: { status: 403, message: messages.hostNotAllowed },
  },
  'Rate limit': {
    extra: { rateLimiting: { limitingHeader: 'x-client', limit: 1, windowMs: 60_000 } },
    shot: (port, surface) => ({ headers: { ...valid(port), 'x-client': `${surface}-${port}` } }),
    prime: true,
    expected: { status: 429, message: /^Rate limit exceeded, retry in \d+ seconds$/ },
  },
  'Body limit': {
    shot: (port) => ({ headers: valid(port), big: true }),
    expected: { status: 413, message: messages.bodyTooLarge },
  },
  'Discovery gate': {
    shot: (port) => ({ headers: valid(port), list: true, noSecret: true }),
    expected: { status: 403, message: messages.discoverySecret },
  },
  Guard: {
    // The guard refuses every call of the service, whichever way it came in (issue 40).
    guard: () => Err('acc is closed'),
    shot: (port) => ({ headers: valid(port) }),
    expected: { status: 403, message: 'acc is closed' },
  },
  'Forwarded Host': {
    // trustProxy: true trusts every peer: X-Forwarded-Host cannot vouch for the Host the client named.
    extra: { fastify: { trustProxy: true } },
    shot: (port) => ({ headers: { ...valid(port), host: 'attacker.example', 'x-forwarded-host': `localhost:${port}` } }),
    expected: { status: 403, message: messages.hostNotAllowed },
  },
  'Load shedding': {
    // 1 byte of heap: over the threshold from the first sample on.
    extra: { underPressure: { maxHeapUsedBytes: 1, sampleInterval: 5 } },
    shot: (port) => ({ headers: valid(port) }),
    expected: { status: 503, message: messages.underPressure },
    ready: async (port) => {
      // A route of the registration (in plugin mode the host app's own 404 is not shed).
      while ((await rawRequest(port, { path: '/api/openapi.json', headers: { host: 'localhost' } })).status !== 503) await new Promise((resolve) => setImmediate(resolve))
    },
  },
}

const { checks: columns, rows } = surfaceTable()

t.test('the table names every check this test knows, and every surface has an adapter', async (t) => {
  t.same(columns, Object.keys(checks))
  t.ok(rows.length >= 8, `${rows.length} surfaces`)
  for (const row of rows) {
    const { name, adapter } = adapterOf(row.surface)
    const pending = Object.values(row.cells).every((cell) => cell.value === 'pending')
    t.ok(adapter || pending || notDriven[name], `${name}: an adapter, a pending row, or a reason it is not driven`)
  }
})

for (const column of columns) {
  const check = checks[column]!
  t.test(`${column}: the same hostile request to every surface`, async (t) => {
    const ports = await servers(t, check.extra, check.guard)
    if (check.ready) {
      await check.ready(ports.own)
      await check.ready(ports.plugin)
    }
    for (const row of rows) {
      const cell = row.cells[column]!
      const { name, adapter } = adapterOf(row.surface)
      if (cell.value === 'n/a') continue
      if (cell.value === 'pending' || !adapter) {
        t.pass(`${name}: ${notDriven[name] ?? 'pending: it lands from another branch'}`, { todo: true })
        continue
      }
      const port = adapter.plugin ? ports.plugin : ports.own
      const shot = check.shot(port, name)
      const before = runs
      if (check.prime) {
        // The prime passes the check (under the limit), so the refusal below is the shot's own.
        const first = outcome(await adapter.send(port, shot))
        t.ok(first.status < 400, `${name}: the first request is served: ${first.status} ${first.message}`)
      }
      const got = outcome(await adapter.send(port, shot))
      if (cell.value === 'no') {
        t.ok(got.status < 400, `${name}: not guarded by ${column} (the table says no): ${got.status} ${got.message}`)
        continue
      }
      const expected = cell.origin && check.expectedOrigin ? check.expectedOrigin : check.expected
      // `yes (tool result)`: MCP answers the refusal inside a tool result (isError), over HTTP 200.
      t.equal(got.status, cell.result ? 200 : expected.status, `${name}: ${column} status`)
      if (typeof expected.message === 'string') t.equal(got.message, expected.message, `${name}: ${column} message`)
      else t.match(got.message, expected.message, `${name}: ${column} message`)
      if (!check.prime && !check.shot(port, name).list) t.equal(runs, before, `${name}: the action did not run`)
    }
  })
}

t.test('MCP over stdio: a message carries no limiting header, so its key is the address app.inject gives (127.0.0.1)', async (t) => {
  const ports = await servers(t, checks['Rate limit']!.extra)
  const first = await mcpOverStdio(ports.own, { headers: valid(ports.own) })
  t.equal(first.status, 200, 'the stdio message is served')
  // The one allowed request of 127.0.0.1 is spent: an HTTP request from loopback without a key header shares it.
  const unkeyed = outcome(await adapters['MCP over HTTP']!.send(ports.own, { headers: valid(ports.own) }))
  t.equal(unkeyed.status, 429)
  t.match(unkeyed.message, /^Rate limit exceeded/)
  const keyed = outcome(await adapters['MCP over HTTP']!.send(ports.own, { headers: { ...valid(ports.own), 'x-client': 'someone-else' } }))
  t.equal(keyed.status, 200, 'another key is not limited')
})
