import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { messages } from '../lib/index.js'
import { freePort } from './helpers/redis.js'
import { canConnect } from './helpers/net.js'

// SIGTERM to `npm start`'s server (example/server.ts, PGlite in a temp directory) while a slow
// request runs: the request finishes, new connections are refused, PGlite is shut down cleanly,
// and the process exits 0. No step has a clock of its own: each wait ends when the server does
// what is awaited or exits (PGlite's first set-up takes from 5 s idle to a minute on a loaded
// machine); the file's timeout is the only bound.

t.setTimeout(600_000)

const root = fileURLToPath(new URL('..', import.meta.url))
// The longest the action allows: the margin between SIGTERM and the slow answer in which the
// listener must be seen closed.
const SLOW_MS = 5000

/** The cluster state in PGlite's pg_control (DBState at byte 16): 1 shut down cleanly, 6 running or killed while running. */
const DB_SHUTDOWNED = 1
const DB_IN_PRODUCTION = 6
function clusterState(dataDir: string): number | undefined {
  const file = join(dataDir, 'global', 'pg_control')
  return existsSync(file) ? readFileSync(file).readUInt32LE(16) : undefined
}


const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

t.test('SIGTERM while a slow request runs: it finishes, new connections are refused, the database is closed, exit 0', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fastify-actions-example-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const dataDir = join(dir, 'pglite')
  const port = await freePort()
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', PGLITE_DIR: dataDir }
  for (const name of ['DATABASE_URL', 'JWT_SECRET', 'DIAGNOSTICS', 'NODE_OPTIONS']) delete env[name]
  const child = spawn(process.execPath, ['--import=tsx', join(root, 'example', 'server.ts')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))

  const waitFor = async (what: string, check: () => boolean | Promise<boolean>) => {
    while (!(await check())) {
      if (child.exitCode !== null) throw new Error(`no ${what}; stdout:\n${stdout}\nstderr:\n${stderr}`)
      await sleep(50)
    }
  }
  const base = `http://127.0.0.1:${port}`
  // The line is printed once it listens: then /status answers at the first try.
  await waitFor('the line saying when it answers', () => /\nAnswering \d+ms after launch\n/.test(stdout))
  t.equal((await fetch(`${base}/status`)).status, 200, 'GET /status answers')
  t.equal(clusterState(dataDir), DB_IN_PRODUCTION, 'PGlite is open while the server runs')

  let answered = false
  const inFlight = fetch(`${base}/api/services`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ intent: 'execute', service: 'greetings', action: 'slow', payload: { ms: SLOW_MS } }),
  }).then(async (response) => {
    answered = true
    return { status: response.status, body: await response.json() }
  })
  await waitFor('slow request in its handler', () => stdout.includes(`greetings.slow: waiting ${SLOW_MS}ms`))

  child.kill('SIGTERM')
  // Until the listener is closed or the slow answer came: bounded by the request, not by a count of tries.
  let refused = false
  let stillRunning = false
  for (;;) {
    if (!(await canConnect(port))) {
      refused = true
      stillRunning = !answered
      break
    }
    if (answered) break
    await sleep(20)
  }
  t.ok(refused, 'new connections are refused once SIGTERM arrived')
  t.ok(stillRunning, 'refused while the slow request was still running')

  t.same(await inFlight, {
    status: 200,
    body: { status: true, message: messages.executed('greetings', 'slow'), data: { waitedMs: SLOW_MS } },
  })
  const [code, signal] = await exited
  t.same({ code, signal }, { code: 0, signal: null }, 'the process exits 0')
  t.equal(clusterState(dataDir), DB_SHUTDOWNED, 'PGlite was shut down cleanly (the database client was closed)')
  t.equal(stderr, '', 'nothing written to stderr')
})

t.test('greetings.slow is bounded: more than 5000 ms is a validation failure', async (t) => {
  const { greetings, SLOW_MAX_MS } = await import('../example/services/greetings.js')
  const { buildServer, execute } = await import('./helpers/server.js')
  const server = await buildServer({ services: [greetings] })
  t.teardown(() => server.close())
  const answer = await execute(server.app, 'greetings', 'slow', { ms: SLOW_MAX_MS + 1 })
  t.equal(answer.statusCode, 400)
  t.same(answer.body, {
    status: false,
    message: messages.validationFailed,
    data: { errors: [{ path: '/ms', message: `must be <= ${SLOW_MAX_MS}` }] },
  })
  const quick = await execute(server.app, 'greetings', 'slow', { ms: 0 })
  t.same(quick.body, { status: true, message: messages.executed('greetings', 'slow'), data: { waitedMs: 0 } })
})
