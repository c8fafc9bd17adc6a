import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const lib = resolve(dirname(fileURLToPath(import.meta.url)), '../lib/index.ts')

/** A fresh process that boots a server and reports which MCP modules it resolved (a module resolve hook). */
const probe = `import { register } from 'node:module'
import { MessageChannel } from 'node:worker_threads'
const { port1, port2 } = new MessageChannel()
const seen = new Set()
port1.on('message', (specifier) => seen.add(specifier))
port1.unref()
const hooks = \`let port
export function initialize(data) { port = data.port }
export async function resolve(specifier, context, next) {
  if (specifier.includes('modelcontextprotocol') || specifier.endsWith('/mcp.js') || specifier.endsWith('/mcp.ts')) port.postMessage(specifier)
  return next(specifier, context)
}\`
register('data:text/javascript,' + encodeURIComponent(hooks), { data: { port: port2 }, transferList: [port2] })
const { createServer } = await import(process.env.LIB)
const server = await createServer({ serverName: 'probe', logServices: false, forceNewInstance: true, services: [{ name: 's', description: '', actions: [{ name: 'a', description: '', handler: () => ({ ok: true, value: 1 }) }] }], rest: { baseUrl: '/api', allowedOrigins: [], mcp: { enabled: process.env.MCP === '1' } } })
await server.rest.app.ready()
await new Promise((r) => setTimeout(r, 100))
await server.close()
console.log('LOADED ' + JSON.stringify([...seen]))
`

function modulesLoaded(t: { teardown: (fn: () => void) => void }, mcp: boolean): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-off-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'probe.mjs')
  writeFileSync(file, probe)
  return new Promise((resolveList, reject) => {
    execFile(process.execPath, ['--import', 'tsx', file], { env: { ...process.env, LIB: lib, MCP: mcp ? '1' : '0' }, timeout: 60_000 }, (error, stdout, stderr) => {
      const line = /^LOADED (.*)$/m.exec(stdout)
      if (error || !line) reject(new Error(`${error?.message ?? 'no LOADED line'}\n${stdout}\n${stderr}`))
      else resolveList(JSON.parse(line[1]) as string[])
    })
  })
}

t.test('MCP off: neither the plugin module nor the SDK is loaded', async (t) => {
  t.same(await modulesLoaded(t, false), [])
})

t.test('MCP on: the plugin loads the SDK (the probe sees it)', async (t) => {
  const loaded = await modulesLoaded(t, true)
  t.ok(loaded.some((specifier) => /plugins\/mcp\.[jt]s$/.test(specifier)), 'the composition imports the adapter')
  t.ok(loaded.some((specifier) => specifier.startsWith('@modelcontextprotocol/sdk/')))
})
