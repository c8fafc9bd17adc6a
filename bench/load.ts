/**
 * The load generator: autocannon in its own process (the harness pins it to another core).
 * argv[2] is a JSON file: { url, connections, durationSec, warmupSec?, method, headers, bodyBase64 }.
 * With `warmupSec`, it first loads the server that long in this same process, prints `WARM`, and
 * waits for a line on stdin before the measured window (`runLoad` in bench/procs.ts takes the server's
 * CPU and RSS baselines in between). A fresh process warming up itself (its own JIT) in the window it
 * measures added its own latency to the first second: a p99 of 6 to 7.6 ms in that second against
 * about 2 ms in the next two, on both servers, and most of a 3 s window's p99 (docs/benchmarks.md).
 * Prints one JSON line: { reqPerSec, p50Ms, p99Ms, total, non2xx, errors, timeouts, statusCodes }.
 */
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'

interface Histogram {
  average: number
  p50: number
  p99: number
  total: number
}
interface AutocannonResult {
  requests: Histogram
  latency: Histogram
  non2xx: number
  errors: number
  timeouts: number
  statusCodeStats: Record<string, { count: number }>
}
interface Instance {
  on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTimeMs: number) => void): void
  on(event: 'done', listener: (result: AutocannonResult) => void): void
  on(event: 'error', listener: (error: Error) => void): void
}
type Autocannon = (options: Record<string, unknown>) => Instance

export interface LoadSpec {
  url: string
  connections: number
  durationSec: number
  /** Seconds of load before the measured window, in the same process (none when absent or 0). */
  warmupSec?: number
  method: string
  headers: Record<string, string>
  bodyBase64: string
  /** A header given a fresh value on every request (its value in `headers` plus a counter): `execute-idempotent`'s key. */
  uniqueHeader?: string
}

export interface LoadResult {
  reqPerSec: number
  p50Ms: number
  p99Ms: number
  total: number
  non2xx: number
  errors: number
  timeouts: number
  statusCodes: Record<string, number>
}

// autocannon ships no types; this is the slice of its API used here.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8')) as LoadSpec
const body = Buffer.from(spec.bodyBase64, 'base64')
let sent = 0
const unique = spec.uniqueHeader
const base = unique === undefined ? '' : spec.headers[unique]
// autocannon's `setupRequest` runs per request: a fresh header value each time.
const requests = unique === undefined ? undefined : [{ setupRequest: (request: { headers: Record<string, string> }) => ({ ...request, headers: { ...request.headers, [unique]: `${base}-${++sent}` } }) }]
const start = (durationSec: number) =>
  autocannon({ url: spec.url, connections: spec.connections, duration: durationSec, method: spec.method, headers: spec.headers, body, pipelining: 1, timeout: 10, ...(requests ? { requests } : {}) })
if (spec.warmupSec) {
  const warm = start(spec.warmupSec)
  await new Promise<void>((resolve, reject) => {
    warm.on('done', () => resolve())
    warm.on('error', reject)
  })
  process.stdout.write('WARM\n')
  // The harness's go; stdin closing (the harness gone) ends the process instead.
  await new Promise<void>((resolve) => {
    process.stdin.once('data', () => resolve())
    process.stdin.once('end', () => process.exit(1))
  })
  process.stdin.pause()
}
const instance = start(spec.durationSec)
// autocannon's own histogram keeps whole milliseconds; record the exact times of 2xx answers for the percentiles.
const latencies: number[] = []
instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
  if (statusCode >= 200 && statusCode < 300) latencies.push(responseTimeMs)
})
const result = await new Promise<AutocannonResult>((resolve, reject) => {
  instance.on('done', resolve)
  instance.on('error', reject)
})
latencies.sort((a, b) => a - b)
const percentile = (p: number, fallback: number) =>
  latencies.length === 0 ? fallback : latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)]
const statusCodes: Record<string, number> = {}
for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = Number(count)
const answer: LoadResult = {
  reqPerSec: result.requests.average,
  p50Ms: Math.round(percentile(50, result.latency.p50) * 1000) / 1000,
  p99Ms: Math.round(percentile(99, result.latency.p99) * 1000) / 1000,
  total: result.requests.total,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  statusCodes,
}
process.stdout.write(`${JSON.stringify(answer)}\n`)
