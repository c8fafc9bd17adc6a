import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const lib = resolve(dirname(fileURLToPath(import.meta.url)), '../lib/index.ts')

/**
 * A fresh process boots a server with a TypeBox-validated action, executes it once valid and once
 * invalid (so both the check and the error list run), and reports every TypeBox module it resolved.
 */
const probe = `import { register } from 'node:module'
import { MessageChannel } from 'node:worker_threads'
const { port1, port2 } = new MessageChannel()
const seen = new Set()
port1.on('message', (url) => seen.add(url))
port1.unref()
const hooks = \`let port
export function initialize(data) { port = data.port }
export async function resolve(specifier, context, next) {
  const found = await next(specifier, context)
  if (found.url.includes('/typebox/build/')) port.postMessage(found.url.slice(found.url.indexOf('/typebox/build/') + 15))
  const drizzle = found.url.lastIndexOf('/node_modules/drizzle-orm/')
  if (drizzle !== -1) port.postMessage('drizzle-orm/' + found.url.slice(drizzle + 26))
  const at = found.url.lastIndexOf('/node_modules/@fastify/')
  if (at !== -1) port.postMessage(found.url.slice(at + 14).split('/').slice(0, 2).join('/'))
  return found
}\`
register('data:text/javascript,' + encodeURIComponent(hooks), { data: { port: port2 }, transferList: [port2] })
const { default: Type } = await import(process.env.TYPEBOX)
const { createAction, createServer, Ok } = await import(process.env.LIB)
const echo = createAction({ name: 'echo', description: 'Echo', validation: Type.Object({ n: Type.Integer({ minimum: 0 }) }), handler: (data) => Ok({ n: data.n }) })
const server = await createServer({ serverName: 'probe', logServices: false, forceNewInstance: true, services: [{ name: 's', description: '', actions: [echo] }], rest: { baseUrl: '/api', allowedOrigins: [], ...JSON.parse(process.env.REST ?? '{}') }, ...JSON.parse(process.env.CONFIG ?? '{}') })
const call = async (payload) => {
  const answer = await server.rest.app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'execute', service: 's', action: 'echo', payload } })
  return [answer.statusCode, answer.json()]
}
const answers = [await call({ n: 1 }), await call({ n: -1 })]
await new Promise((r) => setTimeout(r, 100))
await server.close()
console.log('ANSWERS ' + JSON.stringify(answers))
console.log('LOADED ' + JSON.stringify([...seen]))
console.log('BUILTINS ' + JSON.stringify(process.moduleLoadList.filter((name) => name.startsWith('NativeModule ')).map((name) => name.slice(13))))
`

/** Runs the probe with extra `rest` and top-level config; its answers and the modules it resolved. */
async function runProbe(t: Test, rest: object = {}, config: object = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'footprint-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'probe.mjs')
  writeFileSync(file, probe)
  const env = { ...process.env, LIB: lib, TYPEBOX: import.meta.resolve('typebox'), REST: JSON.stringify(rest), CONFIG: JSON.stringify(config) }
  const stdout = await new Promise<string>((resolveOut, reject) => {
    execFile(process.execPath, ['--import', 'tsx', file], { env, timeout: 60_000 }, (error, out, stderr) => {
      if (error) reject(new Error(`${error.message}\n${out}\n${stderr}`))
      else resolveOut(out)
    })
  })
  return {
    answers: JSON.parse(/^ANSWERS (.*)$/m.exec(stdout)![1]) as Array<[number, { status: boolean; message: string; data: Record<string, unknown> }]>,
    loaded: JSON.parse(/^LOADED (.*)$/m.exec(stdout)![1]) as string[],
    /** Node's own modules the process loaded (`process.moduleLoadList`). */
    builtins: JSON.parse(/^BUILTINS (.*)$/m.exec(stdout)![1]) as string[],
  }
}

t.test('validation loads TypeBox\'s schema compiler, never typebox/value or typebox/compile (about 12 MiB of RSS)', async (t) => {
  const { answers, loaded } = await runProbe(t)
  t.same(answers[0], [200, { status: true, message: "Action 's.echo' executed", data: { n: 1 } }])
  t.same(answers[1], [400, { status: false, message: 'Validation failed', data: { errors: [{ path: '/n', message: 'must be >= 0' }] } }])
  t.ok(loaded.some((path) => path.startsWith('schema/')), 'the schema compiler is loaded')
  t.same(loaded.filter((path) => path.startsWith('value/') || path.startsWith('compile/')), [])
})

const OPTIONAL = ['@fastify/jwt', '@fastify/cookie', '@fastify/rate-limit', '@fastify/under-pressure']

t.test('auth, rate limiting and load shedding load their packages only when they are on', async (t) => {
  const off = await runProbe(t)
  t.same(OPTIONAL.filter((name) => off.loaded.includes(name)), [], 'none of them while off')
  t.ok(off.loaded.includes('@fastify/cors'), 'the probe sees @fastify packages')

  const on = await runProbe(t, { rateLimiting: { limitingHeader: 'x-api-key', limit: 1000 }, underPressure: true }, { auth: { secret: 'footprint-secret-of-at-least-32-bytes!' } })
  t.same(OPTIONAL.filter((name) => !on.loaded.includes(name)), [], 'all of them when on')
  t.same(on.answers[0], [200, { status: true, message: "Action 's.echo' executed", data: { n: 1 } }])
})

t.test('without a database no Drizzle module loads (each costs about 1 MiB of RSS on Node 24 and 26)', async (t) => {
  const { answers, loaded } = await runProbe(t)
  t.same(answers[0][0], 200)
  t.ok(loaded.includes('@fastify/cors'), 'the probe sees the packages it loads')
  // The SQL builders are imported on a model's first query (lib/db/drizzle.ts); entity kinds, columns and
  // table names are read through Drizzle's global symbols. Each Drizzle module re-reads its 180 KB package.json.
  t.same(loaded.filter((path) => path.startsWith('drizzle-orm/')), [])
})

t.test("no ES import of node:http: it would load Node's bundled undici (about 15 MiB of RSS on Node 24 and 26)", async (t) => {
  // On Node 24 and 26 \`import … from 'node:http'\` builds the module namespace from every export, which
  // runs http's lazy getters (WebSocket, CloseEvent, …) and loads undici, worker_threads' internals and the
  // web streams (plugins/errors.ts reads STATUS_CODES through process.getBuiltinModule instead). Node 20
  // has no such getters: there the check holds either way.
  // Compression on (the default): our compressor never reads the global Response (@fastify/compress's
  // onSend did, with `instanceof Response`, which loads undici on every Node version).
  const { answers, builtins } = await runProbe(t)
  t.same(answers[0][0], 200)
  t.ok(builtins.includes('http'), 'the probe sees the builtins it loads')
  t.same(builtins.filter((name) => name.includes('undici')), [])
})
