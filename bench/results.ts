/** The shape of bench/results/latest.json. */
import type { ServerName, WorkloadName } from './shared.js'

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
  /** Calls per second reading the body (`.body` / `text()`), and bare (`*Only`, body unread). */
  fetchVsInject: { injectPerSec: number; fetchPerSec: number; ratio: number; injectOnlyPerSec: number; fetchOnlyPerSec: number; ratioUnread: number }
}

export interface BenchResults {
  machine: Machine
  settings: { rounds: number; durationSec: number; warmupSec: number; connections: number; uploadConnections: number; quick: boolean }
  workloads: WorkloadResult[]
  micro?: MicroResult | { error: string }
}
