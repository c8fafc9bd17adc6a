import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from './helpers/redis.js'
import { canConnect } from './helpers/net.js'

// The example's fleet settings (docs/deployment.md): a malformed value stops the start with one
// line, and SIGTERM with SHUTDOWN_DRAIN_MS fails the health check before the server closes.

const root = fileURLToPath(new URL('..', import.meta.url))
const WAIT_MS = 100_000
// PGlite's start takes 30 to 40 s on a 2-core machine shared by several test runs: room beyond .taprc's 120 s.
t.setTimeout(240_000)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A subtest's `t`. */
type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

function startExample(t: Tap, port: number, extra: NodeJS.ProcessEnv) {
  const dir = mkdtempSync(join(tmpdir(), 'fastify-actions-example-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', PGLITE_DIR: join(dir, 'pglite'), ...extra }
  for (const name of ['DATABASE_URL', 'JWT_SECRET', 'DIAGNOSTICS', 'NODE_OPTIONS', 'REDIS_URL', 'RATE_LIMIT']) if (!(name in extra)) delete env[name]
  const child = spawn(process.execPath, ['--import=tsx', join(root, 'example', 'server.ts')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  const output = { stdout: '', stderr: '' }
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk))
  return { child, exited, output }
}

t.test('a malformed setting ends the start with one clear line, exit 1', async (t) => {
  const cases = [['RATE_LIMIT', 'lots'], ['SHUTDOWN_DRAIN_MS', '-5'], ['MAX_HEAP_USED_MB', '1.5']] as const
  const runs = await Promise.all(cases.map(async ([name, value]) => ({ name, value, ...startExample(t, await freePort(), { [name]: value }) })))
  for (const { name, value, exited, output } of runs) {
    const min = name === 'SHUTDOWN_DRAIN_MS' ? 0 : 1
    t.same(await exited, [1, null], `${name}=${value}: exit 1`)
    t.equal(output.stderr, `Cannot start: ${name} must be an integer of at least ${min}, got ${JSON.stringify(value)}\n`, `${name}=${value}: the message, no stack`)
  }
})

t.test('SIGTERM with SHUTDOWN_DRAIN_MS: /status answers 503 while other requests are still served, then the server closes, exit 0', async (t) => {
  const port = await freePort()
  const { drainingMessage } = await import('../example/app.js')
  const { child, exited, output } = startExample(t, port, { SHUTDOWN_DRAIN_MS: '4000' })
  const base = `http://127.0.0.1:${port}`
  const deadline = Date.now() + WAIT_MS
  while (!(await fetch(`${base}/status`).then((r) => r.status === 200, () => false))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`no answer on /status:\n${output.stdout}\n${output.stderr}`)
    await sleep(25)
  }
  child.kill('SIGTERM')
  const check = async () => {
    const response = await fetch(`${base}/status`)
    return { status: response.status, body: (await response.json()) as unknown }
  }
  let status = await check()
  while (status.status === 200) {
    await sleep(10)
    status = await check()
  }
  t.same(status, { status: 503, body: { status: false, message: drainingMessage, data: {} } }, '/status fails the health check')
  const hello = await fetch(`${base}/api/services`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ intent: 'execute', service: 'greetings', action: 'hello', payload: { name: 'drain' } }),
  })
  t.equal(hello.status, 200, 'a request during the drain is served')
  t.match(await hello.json(), { status: true, data: { greeting: 'Hello, drain!' } })
  t.same(await exited, [0, null], 'then the server closes and exits 0')
  t.notOk(await canConnect(port), 'and takes no more connections')
  t.equal(output.stderr, '', 'nothing written to stderr')
})
