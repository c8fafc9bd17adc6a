/** The shape of a result file: bench/results/latest.json (Node 26, the reference), node24.json, node20.json. */
import type { CurveServerName, ServerName, WorkloadName } from './shared.js'

export interface Machine {
  cpus: number
  cpuModel: string
  node: string
  platform: string
  totalMemMiB: number
  /** 1/5/15-minute load averages when the run started and when it ended. */
  loadAverageStart: number[]
  loadAverageEnd: number[]
  pinned: boolean
  date: string
}

export interface ServerResult {
  name: ServerName
  /** Medians over the rounds; null when skipped. */
  reqPerSec: number | null
  p50Ms: number | null
  p99Ms: number | null
  /** Peak VmRSS during the measured window. */
  rssMiB: number | null
  /** VmRSS after boot, before any load. */
  rssIdleMiB: number | null
  /** Server CPU time (user + system, /proc/<pid>/stat) per answered request, in µs. */
  cpuUsPerReq: number | null
  /** req/s of each round, in order. */
  rounds: number[]
  skipped?: string
  /** Differences from the expected bytes or cross-origin headers, or non-2xx answers under load. */
  notes?: string[]
}

export interface WorkloadResult {
  name: WorkloadName
  servers: ServerResult[]
}

export interface MicroResult {
  dispatch: Array<{ actions: number; bootMs: number; executeActionUs: number; injectUs: number }>
  /**
   * Calls per second reading the body (`.body` / `text()`), and bare (`*Only`, body unread). `floor*`:
   * app.inject followed by the smallest standard `Response` and its `text()` (absent in older runs).
   */
  fetchVsInject: {
    injectPerSec: number
    fetchPerSec: number
    ratio: number
    injectOnlyPerSec: number
    fetchOnlyPerSec: number
    ratioUnread: number
    floorPerSec?: number
    floorRatio?: number
  }
}

/** One server at one point of a load curve: medians over the curve's rounds; null when it did not run. */
export interface CurveSample {
  reqPerSec: number | null
  p99Ms: number | null
  /** Peak VmRSS during the measured window. */
  rssMiB: number | null
  cpuUsPerReq: number | null
  /** Request bytes per second, in MiB/s (the uploads curve). */
  mibPerSec?: number | null
  /** req/s of each round, in order. */
  rounds: number[]
  skipped?: string
  notes?: string[]
}

/** fastify-actions divided by fastify-bare; null when either is missing. Below 1 is better for p99 and RSS. */
export interface CurveRatios {
  reqPerSec: number | null
  p99Ms: number | null
  rssMiB: number | null
  mibPerSec?: number | null
  /** Peak RSS of fastify-actions over bare Fastify with TypeBox loaded (the connections curve; absent in older runs). */
  rssMiBVsTypebox?: number | null
}

export interface LoadCurvePoint {
  /** `1 KiB`, `100 connections`, `8 streams`. */
  label: string
  /** The x value: request bytes, connections or concurrent streams. */
  x: number
  /** The workload served, and the autocannon connections. */
  workload: string
  connections: number
  servers: Record<CurveServerName, CurveSample> & { 'fastify-bare-typebox'?: CurveSample }
  ratio: CurveRatios
}

export interface BootCurvePoint {
  actions: number
  /** Medians over the rounds, each boot in a fresh process; null when every round failed. */
  servers: Record<CurveServerName, { bootMs: number | null; processMs: number | null; rssMiB: number | null; heapUsedMiB: number | null; rounds: number[]; error?: string }>
  ratio: { bootMs: number | null; rssMiB: number | null }
}

export const CURVE_NAMES = ['payload', 'connections', 'uploads', 'boot'] as const
export type CurveName = (typeof CURVE_NAMES)[number]

/** The scaling curves of issue 16: each point fastify-actions against fastify-bare doing the same work. */
export interface CurveResults {
  settings: { rounds: number; durationSec: number; warmupSec: number }
  payload?: LoadCurvePoint[]
  connections?: LoadCurvePoint[]
  uploads?: LoadCurvePoint[]
  boot?: BootCurvePoint[]
}

export interface BenchResults {
  machine: Machine
  settings: {
    rounds: number
    /** Rounds of the peers (hono-zod, moleculer, node-http) in the workloads; absent in runs made before it existed (= rounds). */
    peerRounds?: number
    durationSec: number
    warmupSec: number
    connections: number
    uploadConnections: number
    quick: boolean
    /** BENCH_SHORT=1: the short complete run (bench/node.sh's reference preset). */
    short?: boolean
  }
  workloads: WorkloadResult[]
  micro?: MicroResult | { error: string }
  curves?: CurveResults
}

/** One committed result file and the runtime it was measured on, for the side-by-side report and chart. */
export interface Run {
  /** `Node 26`. */
  label: string
  /** The Node major of the run. */
  major: number
  /** `bench/results/latest.json`. */
  file: string
  results: BenchResults
}

/** The runtimes the performance targets are judged on (issue 29); the newest is the reference (bench/results/latest.json). */
export const REFERENCE_MAJORS = [26, 24] as const
