/**
 * `npm run bench:paired`: a paired A/B that can resolve a few per cent on a shared machine. For each
 * workload (execute-small, execute-output), fastify-actions and fastify-bare alternate in many short
 * rounds (default 16 × 2 s after a 3 s warm-up, each round a fresh server process, the order flipped
 * every round); the same measurement as `npm run bench` and `bench:check` (bench/measure.ts: same
 * compiled build, same pinning, same load process). Each round gives one ratio per metric (req/s,
 * server CPU µs per request, p99, p50); the report is the median of the per-round ratios with their
 * 25-75 % range and a bootstrap 95 % interval of that median. A round-to-round drift of the machine
 * moves both servers of a round alike, so it cancels in the round's ratio, where it does not in a
 * ratio of two medians.
 *
 * Then app.fetch against its floor (app.inject followed by the smallest standard `Response`): the
 * in-process loop of bench/micro.ts (BENCH_MICRO_ONLY=fetch) with BENCH_FETCH_ROUNDS interleaved
 * windows, one ratio per window.
 *
 * Environment: BENCH_PAIRED_ROUNDS (16), BENCH_PAIRED_DURATION (2 s), BENCH_PAIRED_WARMUP (3 s),
 * BENCH_PAIRED_WORKLOADS (comma list; default execute-small,execute-output), BENCH_CONNECTIONS (32),
 * BENCH_PAIRED_FETCH=0 (skip the app.fetch pair), BENCH_FETCH_ROUNDS (16), BENCH_FETCH_WINDOW_MS
 * (1000), BENCH_OUT. A run with the default workloads and the fetch pair writes
 * bench/results/paired-node<major>.json; any other run writes to the temporary directory.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildProject, type Build } from './build.js'
import { measure, type Sample, type Verdict } from './measure.js'
import { canPin, killAll, runBench, SERVER_CORE, spawnNode, waitExit } from './procs.js'
import { requestOf, WORKLOADS, type WorkloadName } from './shared.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const env = process.env
const ROUNDS = Number(env.BENCH_PAIRED_ROUNDS ?? 16)
const DURATION = Number(env.BENCH_PAIRED_DURATION ?? 2)
// 3 s: after a 1 s warm-up the same server measured 65 µs CPU/req against 37 after 3 s (V8 still compiling on the pinned core).
const WARMUP = Number(env.BENCH_PAIRED_WARMUP ?? 3)
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 32)
const FETCH = env.BENCH_PAIRED_FETCH !== '0'
const FETCH_ROUNDS = Number(env.BENCH_FETCH_ROUNDS ?? 16)
const FETCH_WINDOW_MS = Number(env.BENCH_FETCH_WINDOW_MS ?? 1000)
const DEFAULT_WORKLOADS: WorkloadName[] = ['execute-small', 'execute-output']
const workloads = env.BENCH_PAIRED_WORKLOADS
  ? env.BENCH_PAIRED_WORKLOADS.split(',').map((name) => {
      if (!(WORKLOADS as readonly string[]).includes(name.trim())) throw new Error(`BENCH_PAIRED_WORKLOADS: unknown ${name}`)
      return name.trim() as WorkloadName
    })
  : DEFAULT_WORKLOADS
const major = Number(process.versions.node.split('.')[0])
const standard = env.BENCH_PAIRED_WORKLOADS === undefined && FETCH
const outFile = resolve(env.BENCH_OUT ?? (standard ? join(ROOT, `bench/results/paired-node${major}.json`) : join(tmpdir(), `fastify-actions-paired-node${major}.json`)))

/** The median of a list, with its 25 % and 75 % points (linear interpolation). */
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (sorted.length - 1) * q
  const low = Math.floor(at)
  return sorted[low] + (sorted[Math.min(low + 1, sorted.length - 1)] - sorted[low]) * (at - low)
}

/** A bootstrap 95 % interval of the median (2,000 resamples, a fixed seed so a file can be re-derived). */
function bootstrap(values: number[]): [number, number] {
  let seed = 0x9e3779b9
  const random = () => {
    seed ^= seed << 13
    seed ^= seed >>> 17
    seed ^= seed << 5
    return (seed >>> 0) / 2 ** 32
  }
  const medians: number[] = []
  for (let i = 0; i < 2000; i++) {
    const sample = values.map(() => values[Math.floor(random() * values.length)])
    medians.push(quantile(sample, 0.5))
  }
  return [quantile(medians, 0.025), quantile(medians, 0.975)]
}

const r3 = (value: number) => Math.round(value * 1000) / 1000

export interface PairedStat {
  /** Median of the per-round ratios (fastify-actions / baseline). */
  median: number
  /** 25 % and 75 % of the per-round ratios. */
  iqr: [number, number]
  /** Bootstrap 95 % interval of the median. */
  ci95: [number, number]
  perRound: number[]
}

function stat(ratios: number[]): PairedStat {
  return {
    median: r3(quantile(ratios, 0.5)),
    iqr: [r3(quantile(ratios, 0.25)), r3(quantile(ratios, 0.75))],
    ci95: bootstrap(ratios).map(r3) as [number, number],
    perRound: ratios.map(r3),
  }
}

interface Round {
  loadAverage: number
  order: string[]
  actions: { reqPerSec: number; cpuUs: number | null; p50Ms: number; p99Ms: number }
  bare: { reqPerSec: number; cpuUs: number | null; p50Ms: number; p99Ms: number }
}

const brief = (sample: Sample) => ({ reqPerSec: Math.round(sample.load.reqPerSec), cpuUs: sample.cpuUs === null ? null : Math.round(sample.cpuUs * 10) / 10, p50Ms: sample.load.p50Ms, p99Ms: sample.load.p99Ms })

async function pairOf(build: Build, workload: WorkloadName, checked: Map<string, Verdict>) {
  const req = requestOf(workload)
  const rounds: Round[] = []
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? (['fastify-actions', 'fastify-bare'] as const) : (['fastify-bare', 'fastify-actions'] as const)
    const got: Partial<Record<(typeof order)[number], Sample>> = {}
    const load = loadavg()[0]
    for (const server of order) {
      const sample = await measure(build, { workload, server, req, connections: CONNECTIONS, warmupSec: WARMUP, durationSec: DURATION }, checked)
      if ('skip' in sample) throw new Error(`${workload}/${server}: ${sample.skip}`)
      if (sample.load.non2xx + sample.load.errors > 0) throw new Error(`${workload}/${server}: ${sample.load.non2xx} non-2xx, ${sample.load.errors} errors`)
      got[server] = sample
    }
    const round: Round = { loadAverage: Math.round(load * 100) / 100, order: [...order], actions: brief(got['fastify-actions']!), bare: brief(got['fastify-bare']!) }
    rounds.push(round)
    process.stderr.write(
      `  ${workload} ${r + 1}/${ROUNDS} (load ${round.loadAverage}): req/s ${round.actions.reqPerSec} vs ${round.bare.reqPerSec} (${(round.actions.reqPerSec / round.bare.reqPerSec).toFixed(3)}×), ` +
        `CPU ${round.actions.cpuUs} vs ${round.bare.cpuUs} µs/req, p99 ${round.actions.p99Ms} vs ${round.bare.p99Ms} ms\n`,
    )
  }
  const ratio = (pick: (side: Round['actions']) => number | null) =>
    stat(rounds.flatMap((round) => {
      const a = pick(round.actions)
      const b = pick(round.bare)
      return a === null || b === null || b === 0 ? [] : [a / b]
    }))
  const median = (pick: (side: Round['actions']) => number | null, side: 'actions' | 'bare') => r3(quantile(rounds.map((round) => pick(round[side]) ?? NaN).filter((v) => !Number.isNaN(v)), 0.5))
  return {
    workload,
    medians: {
      'fastify-actions': { reqPerSec: median((s) => s.reqPerSec, 'actions'), cpuUs: median((s) => s.cpuUs, 'actions'), p99Ms: median((s) => s.p99Ms, 'actions') },
      'fastify-bare': { reqPerSec: median((s) => s.reqPerSec, 'bare'), cpuUs: median((s) => s.cpuUs, 'bare'), p99Ms: median((s) => s.p99Ms, 'bare') },
    },
    /** fastify-actions / fastify-bare, per round. CPU: below 1 is cheaper; 1.05× the req/s is about 0.952× the CPU. */
    ratios: { reqPerSec: ratio((s) => s.reqPerSec), cpuUs: ratio((s) => s.cpuUs), p99Ms: ratio((s) => s.p99Ms), p50Ms: ratio((s) => s.p50Ms) },
    rounds,
  }
}

/** app.fetch against its floor: bench/micro.ts's loop alone, per-window ratios. */
async function fetchPair(build: Build) {
  const file = join(build.dir, 'paired-fetch.json')
  const micro = spawnNode([join(build.dir, 'bench/micro.js'), file], {
    core: SERVER_CORE,
    env: { NODE_ENV: 'production', BENCH_MICRO_ONLY: 'fetch', BENCH_FETCH_ROUNDS: String(FETCH_ROUNDS), BENCH_FETCH_WINDOW_MS: String(FETCH_WINDOW_MS) },
  })
  const load = loadavg()[0]
  await waitExit(micro, (FETCH_ROUNDS * 5 * FETCH_WINDOW_MS) / 1000 * 1000 + 120_000)
  const { fetchVsInject } = JSON.parse(readFileSync(file, 'utf8')) as { fetchVsInject: { windows: Record<'fetch' | 'floor' | 'inject', number[]> } }
  const { fetch, floor, inject } = fetchVsInject.windows
  return {
    loadAverage: Math.round(load * 100) / 100,
    windows: FETCH_ROUNDS,
    windowMs: FETCH_WINDOW_MS,
    medians: { fetchPerSec: Math.round(quantile(fetch, 0.5)), floorPerSec: Math.round(quantile(floor, 0.5)), injectPerSec: Math.round(quantile(inject, 0.5)) },
    /** app.fetch / floor per window (the target: ≥ 0.95), and floor / inject (the price of any standard Response). */
    fetchVsFloor: stat(fetch.map((value, i) => value / floor[i])),
    floorVsInject: stat(floor.map((value, i) => value / inject[i])),
  }
}

const show = (s: PairedStat) => `${s.median.toFixed(3)}× (25-75 % ${s.iqr[0].toFixed(3)}-${s.iqr[1].toFixed(3)}, 95 % CI ${s.ci95[0].toFixed(3)}-${s.ci95[1].toFixed(3)})`

let currentBuild: Build | undefined
async function main() {
  process.stderr.write(
    `bench:paired: Node ${process.version}, load average ${loadavg().map((v) => v.toFixed(2)).join(' ')}, ${ROUNDS} rounds × ${DURATION} s after ${WARMUP} s, ${CONNECTIONS} connections, ${canPin ? 'pinned' : 'not pinned'}\n`,
  )
  const build = (currentBuild = buildProject(ROOT))
  try {
    const started = new Date().toISOString()
    const loadStart = loadavg().map((v) => Math.round(v * 100) / 100)
    const checked = new Map<string, Verdict>()
    const pairs = []
    for (const workload of workloads) pairs.push(await pairOf(build, workload, checked))
    const fetch = FETCH ? await fetchPair(build) : undefined
    const result = {
      machine: { node: process.version, date: started, pinned: canPin, loadAverageStart: loadStart, loadAverageEnd: loadavg().map((v) => Math.round(v * 100) / 100) },
      settings: { rounds: ROUNDS, durationSec: DURATION, warmupSec: WARMUP, connections: CONNECTIONS },
      pairs,
      ...(fetch ? { fetch } : {}),
    }
    mkdirSync(dirname(outFile), { recursive: true })
    writeFileSync(outFile, `${JSON.stringify(result, null, 2)}\n`)
    const lines = [`bench:paired, Node ${process.version}, load average ${loadStart.join(' ')} → ${result.machine.loadAverageEnd.join(' ')}`]
    for (const pair of pairs) {
      lines.push(`${pair.workload} (fastify-actions / fastify-bare, ${pair.rounds.length} rounds):`)
      lines.push(`  req/s ${show(pair.ratios.reqPerSec)}`, `  CPU/req ${show(pair.ratios.cpuUs)}`, `  p99 ${show(pair.ratios.p99Ms)}`, `  p50 ${show(pair.ratios.p50Ms)}`)
    }
    if (fetch) lines.push(`app.fetch / floor (${fetch.windows} windows of ${fetch.windowMs} ms): ${show(fetch.fetchVsFloor)}`, `floor / app.inject: ${show(fetch.floorVsInject)}`)
    process.stdout.write(`${lines.join('\n')}\n\nResults: ${outFile}\n`)
  } finally {
    killAll()
    build.remove()
  }
}

runBench(main, () => currentBuild?.remove())
