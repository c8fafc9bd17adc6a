/**
 * A fleet on loopback for test/fleet: instance processes, HAProxy in front of them (the configuration
 * docs/deployment.md shows), a PostgreSQL of their own. Every process started here is killed by
 * `killAll` (the test's teardown), even one that never came up.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import pg from 'pg'
import { postgresBin, startCluster } from './postgres.js'
import { freePort, redisSkipReason } from './redis.js'

export const WAIT_MS = 45_000
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** HAProxy's binary, or undefined when the Debian package is not installed. */
export function haproxyBin(): string | undefined {
  const probe = spawnSync('haproxy', ['-v'], { stdio: 'ignore' })
  if (!probe.error && probe.status === 0) return 'haproxy'
  return existsSync('/usr/sbin/haproxy') ? '/usr/sbin/haproxy' : undefined
}

/** Why a fleet test must skip here (HAProxy, PostgreSQL or Redis missing), or false. */
export function fleetSkipReason(): string | false {
  return (
    (!haproxyBin() && 'haproxy is not installed (Debian package haproxy)') ||
    (!process.env.DATABASE_URL && !postgresBin() && 'no DATABASE_URL and no PostgreSQL binaries (initdb, postgres) installed') ||
    redisSkipReason() ||
    false
  )
}

/** Polls `check` until it holds; fails with `what` and `detail()` after WAIT_MS. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, detail: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + WAIT_MS
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${detail()}`)
    await sleep(25)
  }
}

/** The HAProxy configuration docs/deployment.md shows (checked by fleet.test.ts): `bind` and `servers` are `address:port`. */
export function haproxyConfig(bind: string, servers: Record<string, string>, socket: string): string {
  return `global
  stats socket ${socket} mode 600 level admin

defaults
  mode http
  timeout connect 1s
  timeout client 30s
  timeout server 30s
  timeout check 1s
  # A request whose connection could not be made (an instance gone) is sent again, to another
  # instance: it was never sent, so this is safe for POST. Nothing else is retried.
  retries 3
  retry-on conn-failure
  option redispatch 1

frontend fleet
  bind ${bind}
  option forwardfor
  default_backend instances

backend instances
  balance roundrobin
  # Healthy: /status answers 200 and does not report load shedding.
  option httpchk
  http-check send meth GET uri /status ver HTTP/1.1 hdr host localhost
  http-check expect status 200
  http-check expect ! string '"underPressure":true'
  default-server inter 200ms fall 2 rise 2
  http-response set-header X-Fleet-Server %s
${Object.entries(servers)
  .map(([name, address]) => `  server ${name} ${address} check`)
  .join('\n')}
`
}

/** One instance process (`node --import tsx <script>`), answering GET /status on `port`. */
export interface Instance {
  name: string
  port: number
  child: ChildProcess
  output: () => string
  exited: Promise<[number | null, NodeJS.Signals | null]>
}

/** Every instance process started, so the teardown kills them all. */
const spawned = new Set<ChildProcess>()

export async function startInstance(script: string, name: string, port: number, env: NodeJS.ProcessEnv, cwd: string): Promise<Instance> {
  const child = spawn(process.execPath, ['--import=tsx', script], { cwd, env: { ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'pipe'] })
  spawned.add(child)
  let output = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  const instance = { name, port, child, output: () => output, exited }
  await waitFor(
    `instance ${name} answering /status on ${port}`,
    async () => {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`instance ${name} exited:\n${output}`)
      try {
        return (await fetch(`http://127.0.0.1:${port}/status`)).status === 200
      } catch {
        return false
      }
    },
    () => output,
  )
  return instance
}

export async function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill(signal)
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(timer)
}

/** Kills every instance process this module started. */
export async function killInstances(): Promise<void> {
  for (const child of spawned) await stopProcess(child, 'SIGKILL')
}

/** `show stat` on HAProxy's admin socket: the state (UP, DOWN, ...) of each server of the backend. */
export function serverStates(socket: string): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const connection = connect(socket)
    let text = ''
    connection.setEncoding('utf8')
    connection.on('data', (chunk: string) => (text += chunk))
    connection.on('error', reject)
    connection.on('end', () => {
      const [header, ...rows] = text.trim().split('\n')
      const columns = header.replace(/^# /, '').split(',')
      const states: Record<string, string> = {}
      for (const row of rows) {
        const fields = Object.fromEntries(row.split(',').map((value, index) => [columns[index], value]))
        // UP, DOWN, or a transition such as "DOWN 1/2" (down, one check of two passed to come up).
        if (fields.pxname === 'instances' && fields.svname !== 'BACKEND') states[fields.svname] = fields.status
      }
      resolve(states)
    })
    connection.end('show stat\n')
  })
}

/** HAProxy running `haproxyConfig` in `dir` in front of `ports` (server name → port). */
export interface Balancer {
  url: string
  port: number
  process: ChildProcess
  output: () => string
  states: () => Promise<Record<string, string>>
  /** Resolves once HAProxy reports `server` in `state` (UP, DOWN). */
  stateIs: (server: string, state: string) => Promise<void>
}

export async function startBalancer(haproxy: string, dir: string, ports: Record<string, number>): Promise<Balancer> {
  const socket = join(dir, 'haproxy.sock')
  const port = await freePort()
  const configFile = join(dir, 'haproxy.cfg')
  const addresses = Object.fromEntries(Object.entries(ports).map(([name, p]) => [name, `127.0.0.1:${p}`]))
  writeFileSync(configFile, haproxyConfig(`127.0.0.1:${port}`, addresses, socket))
  const child = spawn(haproxy, ['-f', configFile, '-db'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  const states = async (): Promise<Record<string, string>> => (existsSync(socket) ? serverStates(socket).catch(() => ({})) : {})
  const stateIs = (server: string, state: string) => waitFor(`HAProxy to see ${server} ${state}`, async () => (await states())[server] === state, () => output)
  return { url: `http://127.0.0.1:${port}`, port, process: child, output: () => output, states, stateIs }
}

/** A PostgreSQL of its own: a new database on DATABASE_URL's server (CI), else a throwaway cluster. */
export async function provideDatabase(prefix = 'fleet'): Promise<{ url: string; stop: () => Promise<void> }> {
  if (process.env.DATABASE_URL) {
    const name = `${prefix}_${process.pid}_${Date.now()}`
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL })
    await admin.connect()
    await admin.query(`CREATE DATABASE "${name}"`)
    const url = new URL(process.env.DATABASE_URL)
    url.pathname = `/${name}`
    return {
      url: url.toString(),
      stop: async () => {
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
        await admin.end()
      },
    }
  }
  return startCluster(postgresBin()!)
}
