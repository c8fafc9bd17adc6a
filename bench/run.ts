/**
 * `npm run bench`: fastify-actions against four peers on five workloads, plus the in-process
 * micro-benchmarks. Each server runs alone in its own process on 127.0.0.1 (core 0), autocannon in
 * another (core 1); servers take turns, interleaved over the rounds, each after a warm-up; medians
 * are reported. Every child process is killed at the end, even on error.
 *
 * Environment: BENCH_QUICK=1 (one round of 5 s), BENCH_ROUNDS, BENCH_DURATION, BENCH_WARMUP,
 * BENCH_CONNECTIONS, BENCH_WORKLOADS / BENCH_SERVERS (comma lists), BENCH_MICRO=0, BENCH_OUT.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildProject, type Build } from './build.js'
import { canPin, cpuMs, killAll, LOAD_CORE, rssMiB, sampleRss, SERVER_CORE, spawnNode, stop, waitExit, waitReady } from './procs.js'
import type { LoadResult, LoadSpec } from './load.js'
import { renderMarkdown, renderText } from './report.js'
import type { BenchResults, Machine, MicroResult, ServerResult, WorkloadResult } from './results.js'
import { renderSvg } from './svg.js'
import {
  CORS_HEADERS,
  expectedBody,
  OWN_ONLY,
  SERVED_BY,
  requestOf,
  SERVERS,
  WORKLOADS,
  type BenchRequest,
  type ServerName,
  type WorkloadName,
} from './shared.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const env = process.env
const quick = env.BENCH_QUICK === '1'
const settings = {
  rounds: Number(env.BENCH_ROUNDS ?? (quick ? 1 : 3)),
  durationSec: Number(env.BENCH_DURATION ?? (quick ? 5 : 10)),
  warmupSec: Number(env.BENCH_WARMUP ?? (quick ? 1 : 3)),
  connections: Number(env.BENCH_CONNECTIONS ?? 32),
  uploadConnections: 4,
  quick,
}
const pick = <T extends string>(all: readonly T[], list: string | undefined): T[] =>
  list ? all.filter((name) => list.split(',').map((s) => s.trim()).includes(name)) : [...all]
const workloads = pick(WORKLOADS, env.BENCH_WORKLOADS)
const servers = pick(SERVERS, env.BENCH_SERVERS)
const outFile = env.BENCH_OUT ?? (quick ? join(tmpdir(), 'fastify-actions-bench-quick.json') : join(ROOT, 'bench/results/latest.json'))
const publish = !quick && env.BENCH_OUT === undefined

/** Why a server cannot take part in a workload, before it is even started. */
function skipReason(workload: WorkloadName, server: ServerName): string | undefined {
  const served = SERVED_BY[workload]
  if (served && !served.servers.includes(server)) return served.reason
  if (server !== 'fastify-actions') return OWN_ONLY[workload]
  if (workload === 'mcp-call' && !existsSync(join(ROOT, 'plugins/mcp.ts'))) return 'MCP plugin missing'
  if (workload === 'execute-protected' && !existsSync(join(ROOT, 'plugins/auth.ts'))) return 'auth plugin missing'
  if (workload === 'upload-1mb' && !existsSync(join(ROOT, 'plugins/uploads.ts'))) return 'uploads plugin missing'
  return undefined
}

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

function send(port: number, req: BenchRequest, headers = req.headers): Promise<Answer> {
  return new Promise((resolvePromise, reject) => {
    const outgoing = httpRequest(
      { host: '127.0.0.1', port, method: req.method, path: req.path, headers: { ...headers, 'content-length': req.body.length } },
      (incoming) => {
        const chunks: Buffer[] = []
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
        incoming.on('end', () => resolvePromise({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: Buffer.concat(chunks).toString('utf8') }))
      },
    )
    outgoing.setTimeout(10_000, () => outgoing.destroy(new Error('timeout')))
    outgoing.on('error', reject)
    outgoing.end(req.body)
  })
}

/**
 * Sends the workload's request once and compares status, body bytes and the cross-origin headers with
 * the contract. Returns the differences; `skip` when fastify-actions cannot do the workload yet.
 */
async function precheck(workload: WorkloadName, server: ServerName, port: number, req: BenchRequest): Promise<{ notes: string[]; skip?: string }> {
  const notes: string[] = []
  const answer = await send(port, req)
  const expected = expectedBody(workload)
  if (workload === 'execute-protected') {
    const { authorization: _, ...withoutToken } = req.headers
    const anonymous = await send(port, req, withoutToken)
    if (anonymous.status !== 401) {
      const reason = `auth not enforced (no token answered ${anonymous.status}, expected 401)`
      if (server === 'fastify-actions') return { notes, skip: reason }
      notes.push(reason)
    }
  }
  if (answer.status !== 200 || answer.body !== expected) {
    const reason = `answered ${answer.status} ${answer.body.slice(0, 160)}`
    if (server === 'fastify-actions' && answer.status !== 200) return { notes, skip: reason }
    notes.push(`${reason}; expected 200 ${expected.slice(0, 160)}`)
  }
  for (const [name, value] of Object.entries(CORS_HEADERS)) {
    const got = answer.headers[name]
    if (got !== value) notes.push(`header ${name}: ${got === undefined ? 'missing' : JSON.stringify(got)} (expected ${JSON.stringify(value)})`)
  }
  return { notes }
}

function loadSpecFile(build: Build, workload: WorkloadName, req: BenchRequest): (port: number, durationSec: number) => string {
  return (port, durationSec) => {
    const spec: LoadSpec = {
      url: `http://127.0.0.1:${port}${req.path}`,
      connections: workload === 'upload-1mb' ? settings.uploadConnections : settings.connections,
      durationSec,
      method: req.method,
      headers: req.headers,
      bodyBase64: req.body.toString('base64'),
    }
    const file = join(build.dir, `load-${workload}-${durationSec}.json`)
    writeFileSync(file, JSON.stringify(spec))
    return file
  }
}

async function runLoad(build: Build, specFile: string, durationSec: number): Promise<LoadResult> {
  const load = spawnNode([join(build.dir, 'bench/load.js'), specFile], { core: LOAD_CORE })
  const stdout = await waitExit(load, (durationSec + 60) * 1000)
  return JSON.parse(stdout.trim().split('\n').pop() as string) as LoadResult
}

interface Sample {
  load: LoadResult
  rssIdle: number | null
  rssPeak: number | null
  /** Server CPU time per answered request in µs: steadier than req/s on a busy machine. */
  cpuUs: number | null
}

async function measure(
  build: Build,
  workload: WorkloadName,
  server: ServerName,
  req: BenchRequest,
  specOf: (port: number, durationSec: number) => string,
  checked: Map<string, { notes: string[]; skip?: string }>,
): Promise<Sample | { skip: string }> {
  const proc = spawnNode([join(build.dir, `bench/servers/${server}.js`)], { core: SERVER_CORE, env: { BENCH_WORKLOAD: workload, NODE_ENV: 'production' } })
  try {
    const port = await waitReady(proc)
    await new Promise((r) => setTimeout(r, 200))
    const rssIdle = rssMiB(proc.child.pid)
    const key = `${workload}/${server}`
    if (!checked.has(key)) checked.set(key, await precheck(workload, server, port, req))
    const verdict = checked.get(key)!
    if (verdict.skip) return { skip: verdict.skip }
    if (settings.warmupSec > 0) await runLoad(build, specOf(port, settings.warmupSec), settings.warmupSec)
    const sampler = sampleRss(proc.child.pid)
    const cpuBefore = cpuMs(proc.child.pid)
    const load = await runLoad(build, specOf(port, settings.durationSec), settings.durationSec)
    const cpuAfter = cpuMs(proc.child.pid)
    const samples = sampler.stop()
    const cpuUs = cpuBefore !== null && cpuAfter !== null && load.total > 0 ? ((cpuAfter - cpuBefore) * 1000) / load.total : null
    return { load, rssIdle, rssPeak: samples.length > 0 ? Math.max(...samples) : null, cpuUs }
  } finally {
    await stop(proc)
  }
}

const median = (values: number[]): number | null => {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}
const round = (value: number | null, digits: number) => (value === null ? null : Math.round(value * 10 ** digits) / 10 ** digits)

async function runWorkload(build: Build, workload: WorkloadName): Promise<WorkloadResult> {
  const req = requestOf(workload)
  const specOf = loadSpecFile(build, workload, req)
  const samples = new Map<ServerName, Sample[]>()
  const skipped = new Map<ServerName, string>()
  const checked = new Map<string, { notes: string[]; skip?: string }>()
  const failures = new Map<ServerName, string[]>()
  for (const server of servers) {
    const reason = skipReason(workload, server)
    if (reason) skipped.set(server, reason)
  }
  for (let r = 0; r < settings.rounds; r++) {
    // Interleaved: each round starts one server further along, so no server always runs first.
    const order = servers.map((_, i) => servers[(i + r) % servers.length])
    for (const server of order) {
      if (skipped.has(server)) continue
      process.stderr.write(`  ${workload} round ${r + 1}/${settings.rounds}: ${server} ... `)
      try {
        const sample = await measure(build, workload, server, req, specOf, checked)
        if ('skip' in sample) {
          skipped.set(server, sample.skip)
          process.stderr.write(`skipped: ${sample.skip}\n`)
          continue
        }
        ;(samples.get(server) ?? samples.set(server, []).get(server)!).push(sample)
        process.stderr.write(`${Math.round(sample.load.reqPerSec)} req/s, p99 ${sample.load.p99Ms} ms, ${sample.cpuUs?.toFixed(1)} µs CPU/req\n`)
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error)
        ;(failures.get(server) ?? failures.set(server, []).get(server)!).push(message.slice(0, 300))
        process.stderr.write(`failed: ${message.slice(0, 300)}\n`)
      }
    }
  }
  const rows: ServerResult[] = servers.map((name) => {
    const list = samples.get(name) ?? []
    const notes = [...(checked.get(`${workload}/${name}`)?.notes ?? []), ...(failures.get(name) ?? []).map((m) => `round failed: ${m}`)]
    const bad = list.reduce((sum, s) => sum + s.load.non2xx + s.load.errors, 0)
    if (bad > 0) notes.push(`${bad} non-2xx answers or errors under load`)
    const skip = skipped.get(name) ?? (list.length === 0 ? 'no successful round' : undefined)
    return {
      name,
      reqPerSec: round(median(list.map((s) => s.load.reqPerSec)), 0),
      p50Ms: round(median(list.map((s) => s.load.p50Ms)), 2),
      p99Ms: round(median(list.map((s) => s.load.p99Ms)), 2),
      rssMiB: round(median(list.flatMap((s) => (s.rssPeak === null ? [] : [s.rssPeak]))), 1),
      rssIdleMiB: round(median(list.flatMap((s) => (s.rssIdle === null ? [] : [s.rssIdle]))), 1),
      cpuUsPerReq: round(median(list.flatMap((s) => (s.cpuUs === null ? [] : [s.cpuUs]))), 1),
      rounds: list.map((s) => Math.round(s.load.reqPerSec)),
      ...(skip ? { skipped: skip } : {}),
      ...(notes.length > 0 ? { notes } : {}),
    }
  })
  return { name: workload, servers: rows }
}

async function runMicro(build: Build): Promise<MicroResult | { error: string }> {
  const file = join(build.dir, 'micro.json')
  const micro = spawnNode([join(build.dir, 'bench/micro.js'), file], { core: SERVER_CORE, env: { NODE_ENV: 'production' } })
  try {
    await waitExit(micro, 15 * 60 * 1000)
    return JSON.parse(readFileSync(file, 'utf8')) as MicroResult
  } catch (error) {
    return { error: error instanceof Error ? error.message.slice(0, 500) : String(error) }
  }
}

function machineInfo(): Machine {
  const cpu = cpus()
  return {
    cpus: cpu.length,
    cpuModel: cpu[0]?.model.trim() ?? 'unknown',
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    totalMemMiB: Math.round(totalmem() / 1024 / 1024),
    loadAverageStart: loadavg().map((v) => Math.round(v * 100) / 100),
    loadAverageEnd: [],
    pinned: canPin,
    date: new Date().toISOString(),
  }
}

/** Replaces the generated part of docs/benchmarks.md, between its two markers. */
function publishDocs(results: BenchResults): void {
  writeFileSync(join(ROOT, 'docs/benchmarks.svg'), renderSvg(results))
  const page = join(ROOT, 'docs/benchmarks.md')
  if (!existsSync(page)) return
  const text = readFileSync(page, 'utf8')
  const start = '<!-- results:start -->'
  const end = '<!-- results:end -->'
  const from = text.indexOf(start)
  const to = text.indexOf(end)
  if (from === -1 || to === -1) return
  writeFileSync(page, `${text.slice(0, from + start.length)}\n${renderMarkdown(results)}\n${text.slice(to)}`)
}

let currentBuild: Build | undefined

async function main(): Promise<void> {
  const machine = machineInfo()
  process.stderr.write(
    `fastify-actions bench: ${machine.cpus} cores, load average ${machine.loadAverageStart.join(' ')}, ` +
      `${canPin ? `servers on core ${SERVER_CORE}, autocannon on core ${LOAD_CORE}` : 'not pinned (taskset or a second core missing)'}\n`,
  )
  const build = (currentBuild = buildProject(ROOT))
  try {
    const results: BenchResults = { machine, settings, workloads: [] }
    for (const workload of workloads) results.workloads.push(await runWorkload(build, workload))
    if (env.BENCH_MICRO !== '0') {
      process.stderr.write('  micro-benchmarks (boot, dispatch, fetch vs inject) ...\n')
      results.micro = await runMicro(build)
    }
    machine.loadAverageEnd = loadavg().map((v) => Math.round(v * 100) / 100)
    mkdirSync(dirname(outFile), { recursive: true })
    writeFileSync(outFile, `${JSON.stringify(results, null, 2)}\n`)
    if (publish) publishDocs(results)
    process.stdout.write(`${renderText(results)}\n\nResults: ${outFile}${publish ? ', docs/benchmarks.svg, docs/benchmarks.md' : ''}\n`)
  } finally {
    killAll()
    build.remove()
  }
}

process.on('exit', killAll)
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killAll()
    currentBuild?.remove()
    process.exit(130)
  })
}
main().catch((error: unknown) => {
  killAll()
  console.error(error)
  process.exitCode = 1
})
