/**
 * `npm run bench`: fastify-actions against four peers on the workloads, the in-process
 * micro-benchmarks, then the scaling curves (fastify-actions against fastify-bare as payload size,
 * connections, concurrent uploads and registered actions grow). Each server runs alone in its own
 * process on 127.0.0.1 (core 0), autocannon in another (core 1); servers take turns, interleaved over
 * the rounds, each after a warm-up; medians are reported. Every child process is killed at the end,
 * even on error.
 *
 * Environment: BENCH_QUICK=1 (one round of 5 s), BENCH_SHORT=1 (the short complete run: 5 rounds of
 * 3 s, the peers one round, curves 3 rounds of 3 s), BENCH_ROUNDS, BENCH_PEER_ROUNDS, BENCH_DURATION,
 * BENCH_WARMUP, BENCH_CONNECTIONS, BENCH_WORKLOADS / BENCH_SERVERS (comma lists), BENCH_MICRO=0,
 * BENCH_CURVES (0 or a comma list of payload,connections,uploads,boot), BENCH_CURVE_ROUNDS,
 * BENCH_CURVE_DURATION, BENCH_CURVE_WARMUP, BENCH_OUT, BENCH_AS=node24|node26 (set by bench/node.sh),
 * BENCH_PUBLISH=0, BENCH_CHECK=1 (`npm run bench:check`) with BENCH_CHECK_MIN.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { BootSample } from './boot.js'
import { buildProject, type Build } from './build.js'
import { measure, type Job, type Sample, type Verdict } from './measure.js'
import { canPin, killAll, runBench, LOAD_CORE, SERVER_CORE, spawnNode, stop, waitExit } from './procs.js'
import { publishDocs, RESULT_NAME, RESULTS_DIR } from './publish.js'
import { renderText } from './report.js'
import {
  CURVE_NAMES,
  type BenchResults,
  type BootCurvePoint,
  type CurveName,
  type CurveResults,
  type CurveSample,
  type LoadCurvePoint,
  type Machine,
  type MicroResult,
  REFERENCE_MAJORS,
  type ServerResult,
  type WorkloadResult,
} from './results.js'
import { renderSvg } from './svg.js'
import {
  CURVE_SERVERS,
  SERVES,
  OWN_ONLY,
  SERVED_BY,
  requestOf,
  SERVERS,
  WORKLOADS,
  type AnyWorkloadName,
  type CurveServerName,
  type ServerName,
  type WorkloadName,
} from './shared.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const env = process.env
const quick = env.BENCH_QUICK === '1'
/** `npm run bench:check`: execute-small, fastify-actions against fastify-bare, short, exits non-zero below the ratio. */
const check = env.BENCH_CHECK === '1'
/**
 * BENCH_SHORT=1: a complete run (it publishes) with shorter windows, so that Node 26 and Node 24 both
 * fit in about 25 minutes on 2 cores: fastify-actions and fastify-bare get 5 interleaved rounds (the
 * same-run ratios the targets are judged on: on a shared 2-core machine a server's CPU per request
 * moves between processes of the same build, and a median of three moved most ratios by more than
 * their distance to a target), the peers get one, the curves 3.
 */
const short = !quick && !check && env.BENCH_SHORT === '1'
const workloadRounds = Number(env.BENCH_ROUNDS ?? (quick ? 1 : short ? 5 : 3))
const settings = {
  rounds: workloadRounds,
  peerRounds: Math.min(workloadRounds, Number(env.BENCH_PEER_ROUNDS ?? (short ? 1 : workloadRounds))),
  durationSec: Number(env.BENCH_DURATION ?? (check || short ? 3 : quick ? 5 : 10)),
  warmupSec: Number(env.BENCH_WARMUP ?? (quick || check || short ? 1 : 3)),
  connections: Number(env.BENCH_CONNECTIONS ?? 32),
  uploadConnections: 4,
  quick,
  short,
}
const curveSettings = {
  rounds: Number(env.BENCH_CURVE_ROUNDS ?? (quick ? 1 : 3)),
  durationSec: Number(env.BENCH_CURVE_DURATION ?? (quick || short ? 3 : 5)),
  warmupSec: Number(env.BENCH_CURVE_WARMUP ?? (quick || short ? 1 : 2)),
}
const CHECK_MIN = Number(env.BENCH_CHECK_MIN ?? 0.85)
/** The names of `list` (a comma list) that are in `all`, in `all`'s order; every name when unset. Unknown names are reported (`none` selects nothing, quietly). */
function pick<T extends string>(all: readonly T[], list: string | undefined, variable: string): T[] {
  if (!list) return [...all]
  const names = list.split(',').map((s) => s.trim())
  const unknown = names.filter((name) => name !== 'none' && !(all as readonly string[]).includes(name))
  if (unknown.length > 0) process.stderr.write(`${variable}: unknown ${unknown.join(', ')} (known: ${all.join(', ')})\n`)
  return all.filter((name) => names.includes(name))
}
const workloads: WorkloadName[] = check ? ['execute-small'] : pick(WORKLOADS, env.BENCH_WORKLOADS, 'BENCH_WORKLOADS')
const servers: ServerName[] = check ? ['fastify-actions', 'fastify-bare'] : pick(SERVERS, env.BENCH_SERVERS, 'BENCH_SERVERS')
const curves: CurveName[] = check || env.BENCH_CURVES === '0' ? [] : pick(CURVE_NAMES, env.BENCH_CURVES, 'BENCH_CURVES')
const runMicroBench = !check && env.BENCH_MICRO !== '0'

/**
 * Where the results go. Only a complete run (every workload, server and curve, the micro-benchmarks,
 * not quick; BENCH_SHORT counts) publishes, to the result file of the Node it runs on: Node 26 (the
 * newest LTS, the performance reference) to bench/results/latest.json, any other major N to
 * bench/results/nodeN.json (`npm run bench:node24`: node24.json; this machine's Node 20: node20.json).
 * Then the chart and the results section of docs/benchmarks.md are regenerated from every result file,
 * so one runtime's run never erases another's. Anything else writes to the temporary directory and
 * leaves the docs alone.
 */
const REFERENCE_MAJOR = REFERENCE_MAJORS[0]
const major = Number(process.versions.node.split('.')[0])
const resultFileOf = (m: number) => join(RESULTS_DIR, m === REFERENCE_MAJOR ? 'latest.json' : `node${m}.json`)
if (env.BENCH_AS !== undefined && env.BENCH_AS !== `node${major}`) {
  throw new Error(`BENCH_AS=${env.BENCH_AS} on Node ${process.version}: run it through npm run bench:${env.BENCH_AS} (bench/node.sh)`)
}
const complete =
  !quick &&
  !check &&
  env.BENCH_WORKLOADS === undefined &&
  env.BENCH_SERVERS === undefined &&
  runMicroBench &&
  curves.length === CURVE_NAMES.length
const committed = (file: string) => dirname(resolve(file)) === RESULTS_DIR && RESULT_NAME.test(basename(file))
const outFile = resolve(
  env.BENCH_OUT ??
    (complete && env.BENCH_PUBLISH !== '0'
      ? resultFileOf(major)
      : join(tmpdir(), `fastify-actions-bench-${check ? 'check' : quick ? 'quick' : 'partial'}-node${major}.json`)),
)
if (!complete && committed(outFile)) {
  throw new Error(`${outFile} holds a complete run: a quick, partial or check run does not overwrite it (unset BENCH_OUT)`)
}
if (committed(outFile) && outFile !== resultFileOf(major)) {
  throw new Error(`${outFile} is not the result file of Node ${major} (${relative(ROOT, resultFileOf(major))}): run it on its own Node (npm run bench:node24, bench:node26)`)
}
const publish = complete && env.BENCH_PUBLISH !== '0' && committed(outFile)

/** Why a server cannot take part in a workload, before it is even started. */
function skipReason(workload: AnyWorkloadName, server: ServerName): string | undefined {
  const served = SERVED_BY[workload]
  if (served && !served.servers.includes(server)) return served.reason
  const serves = SERVES[server]
  if (serves && !serves.workloads.includes(workload)) return serves.reason
  if (server === 'mcp-sdk' || server === 'fastify-bare-typebox') return undefined
  if (server !== 'fastify-actions') return OWN_ONLY[workload as WorkloadName]
  if (workload === 'mcp-call' && !existsSync(join(ROOT, 'plugins/mcp.ts'))) return 'MCP plugin missing'
  if (workload === 'execute-protected' && !existsSync(join(ROOT, 'plugins/auth.ts'))) return 'auth plugin missing'
  if ((workload === 'upload-1mb' || workload === 'upload-10mb') && !existsSync(join(ROOT, 'plugins/uploads.ts'))) return 'uploads plugin missing'
  return undefined
}


const median = (values: number[]): number | null => {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}
const round = (value: number | null, digits: number) => (value === null ? null : Math.round(value * 10 ** digits) / 10 ** digits)
const quotient = (value: number | null | undefined, base: number | null | undefined) =>
  value == null || base == null || base === 0 ? null : round(value / base, 3)
const nonNull = (values: Array<number | null>) => values.flatMap((v) => (v === null ? [] : [v]))

// Every round: the pair, and the baselines of a single workload (mcp-sdk for mcp-call, bare + TypeBox for memory).
const PAIR: readonly ServerName[] = ['fastify-actions', 'fastify-bare', 'mcp-sdk', 'fastify-bare-typebox']

/**
 * The servers of one workload (or curve point), `count` rounds in a rotated order (the peers only in
 * the first `peerCount`); samples, skips and failures by server.
 */
async function rounds(build: Build, jobOf: (server: ServerName) => Job, who: readonly ServerName[], count: number, checked: Map<string, Verdict>, label: string, peerCount = count) {
  const samples = new Map<ServerName, Sample[]>()
  const skipped = new Map<ServerName, string>()
  const failures = new Map<ServerName, string[]>()
  for (const server of who) {
    const reason = skipReason(jobOf(server).workload, server)
    if (reason) skipped.set(server, reason)
  }
  for (let r = 0; r < count; r++) {
    // Interleaved: each round starts one server further along, so no server always runs first.
    const order = who.map((_, i) => who[(i + r) % who.length])
    for (const server of order) {
      if (skipped.has(server) || (r >= peerCount && !PAIR.includes(server))) continue
      process.stderr.write(`  ${label} round ${r + 1}/${count}: ${server} ... `)
      try {
        const sample = await measure(build, jobOf(server), checked)
        if ('skip' in sample) {
          skipped.set(server, sample.skip)
          process.stderr.write(`skipped: ${sample.skip}\n`)
          continue
        }
        ;(samples.get(server) ?? samples.set(server, []).get(server)!).push(sample)
        process.stderr.write(
          `${Math.round(sample.load.reqPerSec)} req/s, p99 ${sample.load.p99Ms} ms, ${sample.cpuUs?.toFixed(1)} µs CPU/req, peak RSS ${sample.rssPeak?.toFixed(1)} MiB\n`,
        )
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error)
        ;(failures.get(server) ?? failures.set(server, []).get(server)!).push(message.slice(0, 300))
        process.stderr.write(`failed: ${message.slice(0, 300)}\n`)
      }
    }
  }
  return { samples, skipped, failures }
}

async function runWorkload(build: Build, workload: WorkloadName, checked: Map<string, Verdict>): Promise<WorkloadResult> {
  const req = requestOf(workload)
  const connections = workload === 'upload-1mb' ? settings.uploadConnections : settings.connections
  const jobOf = (server: ServerName): Job => ({ workload, server, req, connections, warmupSec: settings.warmupSec, durationSec: settings.durationSec })
  // A server that serves only some workloads (SERVES) takes no row in the others.
  const who = servers.filter((server) => SERVES[server]?.workloads.includes(workload) ?? true)
  const { samples, skipped, failures } = await rounds(build, jobOf, who, settings.rounds, checked, workload, settings.peerRounds)
  const rows: ServerResult[] = who.map((name) => {
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
      rssMiB: round(median(nonNull(list.map((s) => s.rssPeak))), 1),
      rssIdleMiB: round(median(nonNull(list.map((s) => s.rssIdle))), 1),
      cpuUsPerReq: round(median(nonNull(list.map((s) => s.cpuUs))), 1),
      rounds: list.map((s) => Math.round(s.load.reqPerSec)),
      ...(skip ? { skipped: skip } : {}),
      ...(notes.length > 0 ? { notes } : {}),
    }
  })
  return { name: workload, servers: rows }
}

// ---------------------------------------------------------------- scaling curves

/** The open-files limit of this process (and so of its children): `ulimit -n`; Infinity when unlimited or unknown. */
function fileLimit(): number {
  const out = spawnSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).stdout?.trim()
  const value = Number(out)
  return Number.isFinite(value) && value > 0 ? value : Infinity
}

interface CurvePointSpec {
  label: string
  x: number
  workload: AnyWorkloadName
  connections: number
  /** Why the point cannot run on this machine (the file-descriptor limit). */
  skip?: string
}

async function runLoadCurve(build: Build, name: string, points: CurvePointSpec[], checked: Map<string, Verdict>, extra?: 'fastify-bare-typebox'): Promise<LoadCurvePoint[]> {
  const who: readonly ServerName[] = extra ? [...CURVE_SERVERS, extra] : CURVE_SERVERS
  const result: LoadCurvePoint[] = []
  for (const point of points) {
    const req = requestOf(point.workload)
    const jobOf = (server: ServerName): Job => ({
      workload: point.workload,
      server,
      req,
      connections: point.connections,
      warmupSec: curveSettings.warmupSec,
      durationSec: curveSettings.durationSec,
    })
    const run = point.skip
      ? { samples: new Map<ServerName, Sample[]>(), skipped: new Map<ServerName, string>(who.map((s) => [s, point.skip!])), failures: new Map<ServerName, string[]>() }
      : await rounds(build, jobOf, who, curveSettings.rounds, checked, `${name} ${point.label}`)
    const sampleOf = (server: CurveServerName | 'fastify-bare-typebox'): CurveSample => {
      const list = run.samples.get(server) ?? []
      const notes = [...(checked.get(`${point.workload}/${server}`)?.notes ?? []), ...(run.failures.get(server) ?? []).map((m) => `round failed: ${m}`)]
      const bad = list.reduce((sum, s) => sum + s.load.non2xx + s.load.errors, 0)
      if (bad > 0) notes.push(`${bad} non-2xx answers or errors under load`)
      const skip = run.skipped.get(server) ?? (list.length === 0 ? 'no successful round' : undefined)
      const reqPerSec = median(list.map((s) => s.load.reqPerSec))
      return {
        reqPerSec: round(reqPerSec, 0),
        p99Ms: round(median(list.map((s) => s.load.p99Ms)), 2),
        rssMiB: round(median(nonNull(list.map((s) => s.rssPeak))), 1),
        cpuUsPerReq: round(median(nonNull(list.map((s) => s.cpuUs))), 1),
        ...(name === 'uploads' ? { mibPerSec: round(reqPerSec === null ? null : (reqPerSec * req.body.length) / 1024 / 1024, 1) } : {}),
        rounds: list.map((s) => Math.round(s.load.reqPerSec)),
        ...(skip ? { skipped: skip } : {}),
        ...(notes.length > 0 ? { notes } : {}),
      }
    }
    const fa = sampleOf('fastify-actions')
    const bare = sampleOf('fastify-bare')
    const typebox = extra ? sampleOf(extra) : undefined
    result.push({
      label: point.label,
      x: point.x,
      workload: point.workload,
      connections: point.connections,
      servers: { 'fastify-actions': fa, 'fastify-bare': bare, ...(typebox ? { 'fastify-bare-typebox': typebox } : {}) },
      ratio: {
        reqPerSec: quotient(fa.reqPerSec, bare.reqPerSec),
        p99Ms: quotient(fa.p99Ms, bare.p99Ms),
        rssMiB: quotient(fa.rssMiB, bare.rssMiB),
        ...(typebox ? { rssMiBVsTypebox: quotient(fa.rssMiB, typebox.rssMiB) } : {}),
        ...(name === 'uploads' ? { mibPerSec: quotient(fa.mibPerSec, bare.mibPerSec) } : {}),
      },
    })
  }
  return result
}

const BOOT_SIZES = [10, 1_000, 10_000]

/** Boot to ready and RSS after ready, each boot in a fresh process (bench/boot.ts), the servers taking turns. */
async function runBootCurve(build: Build): Promise<BootCurvePoint[]> {
  const points: BootCurvePoint[] = []
  for (const actions of BOOT_SIZES) {
    const got = new Map<CurveServerName, BootSample[]>()
    const errors = new Map<CurveServerName, string>()
    for (let r = 0; r < curveSettings.rounds; r++) {
      const order = CURVE_SERVERS.map((_, i) => CURVE_SERVERS[(i + r) % CURVE_SERVERS.length])
      for (const server of order) {
        process.stderr.write(`  boot ${actions} actions round ${r + 1}/${curveSettings.rounds}: ${server} ... `)
        const proc = spawnNode([join(build.dir, 'bench/boot.js'), server, String(actions)], { core: SERVER_CORE, env: { NODE_ENV: 'production' } })
        try {
          const stdout = await waitExit(proc, 5 * 60 * 1000)
          const sample = JSON.parse(stdout.trim().split('\n').pop() as string) as BootSample
          ;(got.get(server) ?? got.set(server, []).get(server)!).push(sample)
          process.stderr.write(`${sample.bootMs} ms, RSS ${sample.rssMiB} MiB\n`)
        } catch (error) {
          const message = error instanceof Error ? error.message.slice(0, 300) : String(error)
          errors.set(server, message)
          process.stderr.write(`failed: ${message}\n`)
        } finally {
          await stop(proc)
        }
      }
    }
    const of = (server: CurveServerName) => {
      const list = got.get(server) ?? []
      const error = errors.get(server)
      return {
        bootMs: round(median(list.map((s) => s.bootMs)), 1),
        processMs: round(median(list.map((s) => s.processMs)), 0),
        rssMiB: round(median(list.map((s) => s.rssMiB)), 1),
        heapUsedMiB: round(median(list.map((s) => s.heapUsedMiB)), 1),
        rounds: list.map((s) => s.bootMs),
        ...(error ? { error } : {}),
      }
    }
    const fa = of('fastify-actions')
    const bare = of('fastify-bare')
    points.push({ actions, servers: { 'fastify-actions': fa, 'fastify-bare': bare }, ratio: { bootMs: quotient(fa.bootMs, bare.bootMs), rssMiB: quotient(fa.rssMiB, bare.rssMiB) } })
  }
  return points
}

async function runCurves(build: Build, checked: Map<string, Verdict>): Promise<CurveResults> {
  const out: CurveResults = { settings: curveSettings }
  if (curves.includes('payload')) {
    out.payload = await runLoadCurve(
      build,
      'payload',
      (['payload-1kb', 'payload-64kb', 'payload-1mb'] as const).map((workload) => {
        const bytes = requestOf(workload).body.length
        return { label: workload.replace('payload-', '').toUpperCase().replace('KB', ' KiB').replace('MB', ' MiB'), x: bytes, workload, connections: settings.connections }
      }),
      checked,
    )
  }
  if (curves.includes('connections')) {
    const limit = fileLimit()
    out.connections = await runLoadCurve(
      build,
      'connections',
      [10, 100, 1000].map((connections) => ({
        label: `${connections} connections`,
        x: connections,
        workload: 'execute-small',
        connections,
        // Each connection is a descriptor in the load process and one in the server; keep room for the rest.
        ...(connections + 256 > limit ? { skip: `open-files limit ${limit} is below ${connections + 256}: raise it (ulimit -n)` } : {}),
      })),
      checked,
      // Bare Fastify with TypeBox's modules loaded too: the memory baseline of an application that writes its schemas with TypeBox.
      'fastify-bare-typebox',
    )
  }
  if (curves.includes('uploads')) {
    out.uploads = await runLoadCurve(
      build,
      'uploads',
      [1, 8, 32].map((streams) => ({ label: `${streams} stream${streams === 1 ? '' : 's'}`, x: streams, workload: 'upload-10mb', connections: streams })),
      checked,
    )
  }
  if (curves.includes('boot')) out.boot = await runBootCurve(build)
  return out
}

// ---------------------------------------------------------------- micro, machine, docs

async function runMicro(build: Build): Promise<MicroResult | { error: string }> {
  const file = join(build.dir, 'micro.json')
  const micro = spawnNode([join(build.dir, 'bench/micro.js'), file], { core: SERVER_CORE, env: { NODE_ENV: 'production', ...(short ? { BENCH_QUICK: '1' } : {}) } })
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

/** `npm run bench:check`: the ratio of execute-small req/s, median of the per-round ratios; false below CHECK_MIN. */
function checkVerdict(results: BenchResults): boolean {
  const rows = results.workloads.find((w) => w.name === 'execute-small')?.servers ?? []
  const fa = rows.find((s) => s.name === 'fastify-actions')
  const bare = rows.find((s) => s.name === 'fastify-bare')
  if (!fa?.reqPerSec || !bare?.reqPerSec || fa.rounds.length !== bare.rounds.length) {
    process.stdout.write(`bench:check: no comparison (fastify-actions: ${fa?.skipped ?? 'no result'}, fastify-bare: ${bare?.skipped ?? 'no result'})\n`)
    return false
  }
  const perRound = fa.rounds.map((value, i) => value / bare.rounds[i])
  const ratio = median(perRound)!
  const ok = ratio >= CHECK_MIN
  process.stdout.write(
    `\nbench:check: execute-small, fastify-actions at ${ratio.toFixed(3)}× fastify-bare req/s (rounds ${perRound.map((r) => r.toFixed(3)).join(', ')}; ` +
      `medians ${fa.reqPerSec} vs ${bare.reqPerSec} req/s; CPU ${fa.cpuUsPerReq} vs ${bare.cpuUsPerReq} µs/req)\n` +
      `bench:check: ${ok ? 'ok' : 'BELOW'}: the floor is ${CHECK_MIN}× (BENCH_CHECK_MIN); load average ${loadavg().map((v) => v.toFixed(2)).join(' ')}\n`,
  )
  return ok
}

let currentBuild: Build | undefined

async function main(): Promise<void> {
  const machine = machineInfo()
  process.stderr.write(
    `fastify-actions bench${check ? ' (check)' : ''}: Node ${process.version}, ${machine.cpus} cores, load average ${machine.loadAverageStart.join(' ')}, ` +
      `${canPin ? `servers on core ${SERVER_CORE}, autocannon on core ${LOAD_CORE}` : 'not pinned (taskset or a second core missing)'}\n`,
  )
  const build = (currentBuild = buildProject(ROOT))
  try {
    const results: BenchResults = { machine, settings, workloads: [] }
    const checked = new Map<string, Verdict>()
    for (const workload of workloads) results.workloads.push(await runWorkload(build, workload, checked))
    if (runMicroBench) {
      process.stderr.write('  micro-benchmarks (boot, dispatch, fetch vs inject) ...\n')
      results.micro = await runMicro(build)
    }
    if (curves.length > 0) {
      process.stderr.write(`  scaling curves (${curves.join(', ')}): ${curveSettings.rounds} round(s) × ${curveSettings.durationSec} s after ${curveSettings.warmupSec} s per point and server\n`)
      results.curves = await runCurves(build, checked)
    }
    machine.loadAverageEnd = loadavg().map((v) => Math.round(v * 100) / 100)
    mkdirSync(dirname(outFile), { recursive: true })
    writeFileSync(outFile, `${JSON.stringify(results, null, 2)}\n`)
    if (publish) publishDocs(ROOT)
    const published = publish ? ', docs/benchmarks.svg, docs/benchmarks.md (results)' : ''
    process.stdout.write(`${renderText(results)}\n\nResults: ${outFile}${published}\n`)
    if (check && !checkVerdict(results)) process.exitCode = 1
  } finally {
    killAll()
    build.remove()
  }
}

runBench(main, () => currentBuild?.remove())
