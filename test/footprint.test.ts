import t from 'tap'
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
  return found
}\`
register('data:text/javascript,' + encodeURIComponent(hooks), { data: { port: port2 }, transferList: [port2] })
const { default: Type } = await import(process.env.TYPEBOX)
const { createAction, createServer, Ok } = await import(process.env.LIB)
const echo = createAction({ name: 'echo', description: 'Echo', validation: Type.Object({ n: Type.Integer({ minimum: 0 }) }), handler: (data) => Ok({ n: data.n }) })
const server = await createServer({ serverName: 'probe', logServices: false, forceNewInstance: true, services: [{ name: 's', description: '', actions: [echo] }], rest: { baseUrl: '/api', allowedOrigins: [] } })
const call = async (payload) => {
  const answer = await server.rest.app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'execute', service: 's', action: 'echo', payload } })
  return [answer.statusCode, answer.json()]
}
const answers = [await call({ n: 1 }), await call({ n: -1 })]
await new Promise((r) => setTimeout(r, 100))
await server.close()
console.log('ANSWERS ' + JSON.stringify(answers))
console.log('LOADED ' + JSON.stringify([...seen]))
`

t.test('validation loads TypeBox\'s schema compiler, never typebox/value or typebox/compile (about 12 MiB of RSS)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'footprint-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'probe.mjs')
  writeFileSync(file, probe)
  const stdout = await new Promise<string>((resolveOut, reject) => {
    execFile(process.execPath, ['--import', 'tsx', file], { env: { ...process.env, LIB: lib, TYPEBOX: import.meta.resolve('typebox') }, timeout: 60_000 }, (error, out, stderr) => {
      if (error) reject(new Error(`${error.message}\n${out}\n${stderr}`))
      else resolveOut(out)
    })
  })
  const answers = JSON.parse(/^ANSWERS (.*)$/m.exec(stdout)![1]) as Array<[number, { status: boolean; message: string; data: Record<string, unknown> }]>
  t.same(answers[0], [200, { status: true, message: "Action 's.echo' executed", data: { n: 1 } }])
  t.same(answers[1], [400, { status: false, message: 'Validation failed', data: { errors: [{ path: '/n', message: 'must be >= 0' }] } }])
  const loaded = JSON.parse(/^LOADED (.*)$/m.exec(stdout)![1]) as string[]
  t.ok(loaded.some((path) => path.startsWith('schema/')), 'the schema compiler is loaded')
  t.same(loaded.filter((path) => path.startsWith('value/') || path.startsWith('compile/')), [])
})
