/**
 * `tsx bench/memory.ts [workload] [rounds] [seconds]`: where a server's memory goes under load.
 * fastify-actions and fastify-bare (BENCH_SERVERS to change), compiled and pinned as in the bench,
 * each started with bench/memprobe.ts preloaded, take turns (rotated) for `rounds` rounds of
 * `seconds` of autocannon load (32 connections, MEM_CONNECTIONS) after a 1 s warm-up. Prints, per server, the medians
 * of the idle baseline after boot and of the breakdown at peak RSS: RSS, V8's heap spaces (committed),
 * external memory and what is left outside the V8 heap. MEM_NODE_FLAGS adds node flags to the servers
 * (e.g. `--max-semi-space-size=8`); the server CPU µs per request is printed too (for an A/B of CPU); MEM_ENV adds `NAME=value,…` to their environment; MEM_AB names
 * a second build directory (bench/build.ts output of another checkout) whose fastify-actions runs as
 * `fastify-actions@B` in the same rotation, for an A/B; MEM_TRACE_GC=1 runs the servers with
 * `--trace-gc-nvp` and adds, per answered request of the measured window, the bytes V8 allocated and
 * promoted to the old generation, and the scavenges and mark-compacts (figures that do not depend on
 * how fast a busy machine lets the server run). Defaults: execute-small, 3 rounds, 5 s.
 */
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { writeFileSync } from 'node:fs'
import { buildProject } from './build.js'
import type { LoadResult, LoadSpec } from './load.js'
import { cpuMs, killAll, rssMiB, runLoad, sampleRss, SERVER_CORE, spawnNode, stop, waitReady } from './procs.js'
import { requestOf, SERVERS, type AnyWorkloadName, type ServerName } from './shared.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const workload = (process.argv[2] ?? 'execute-small') as AnyWorkloadName
const rounds = Number(process.argv[3] ?? 3)
const seconds = Number(process.argv[4] ?? 5)
const ab = process.env.MEM_AB
const servers = [...(process.env.BENCH_SERVERS?.split(',') ?? ['fastify-actions', 'fastify-bare']), ...(ab ? ['fastify-actions@B'] : [])] as ServerName[]
for (const s of servers) if (!SERVERS.includes(s.replace(/@B$/, '') as ServerName)) throw new Error(`unknown server ${s}`)
const traceGc = process.env.MEM_TRACE_GC === '1'
const connections = Number(process.env.MEM_CONNECTIONS ?? 32)
const flags = [...(process.env.MEM_NODE_FLAGS?.split(' ').filter(Boolean) ?? []), ...(traceGc ? ['--trace-gc-nvp'] : [])]

interface GcWindow {
  allocatedPerReq: number
  promotedPerReq: number
  scavengesPer10k: number
  markCompacts: number
  /** Bytes alive in the young generation after a scavenge (the requests in flight), median over the window. */
  survivedPerScavenge: number
}

/** One `--trace-gc-nvp` line: JSON (`GC: {...}`, Node 26) or `key=value` pairs (Node 20 and 24). */
function* gcEvents(text: string): Generator<{ gc: string; allocated?: number; promoted?: number; new_space_survived?: number }> {
  for (const line of text.split('\n')) {
    const json = /GC: (\{.*\})/.exec(line)
    if (json) {
      try {
        yield JSON.parse(json[1])
      } catch {
        // a line cut by the pipe
      }
    } else if (line.includes(' gc=')) {
      const pairs = Object.fromEntries([...line.matchAll(/(\w[\w.]*)=([\w.]+)/g)].map((m) => [m[1], m[2]]))
      const number = (key: string) => (pairs[key] === undefined ? undefined : Number(pairs[key]))
      yield { gc: pairs.gc, allocated: number('allocated'), promoted: number('promoted'), new_space_survived: number('new_space_survived') }
    }
  }
}

/** Sums V8's `--trace-gc-nvp` lines of a stdout slice, per answered request. */
function gcWindow(text: string, requests: number): GcWindow {
  let allocated = 0
  let promoted = 0
  let scavenges = 0
  let markCompacts = 0
  const survived: number[] = []
  for (const event of gcEvents(text)) {
    allocated += event.allocated ?? 0
    promoted += event.promoted ?? 0
    if (event.gc === 's' || event.gc === 'mmc') {
      scavenges++
      if (event.new_space_survived !== undefined) survived.push(event.new_space_survived)
    } else markCompacts++
  }
  const per = Math.max(1, requests)
  return {
    allocatedPerReq: allocated / per,
    promotedPerReq: promoted / per,
    scavengesPer10k: (scavenges * 10_000) / per,
    markCompacts,
    survivedPerScavenge: survived.length > 0 ? median(survived) : 0,
  }
}
const extraEnv = Object.fromEntries((process.env.MEM_ENV?.split(',').filter(Boolean) ?? []).map((pair) => pair.split('=') as [string, string]))

type Snap = { rss: number; modules: number; heapTotal: number; heapUsed: number; external: number; arrayBuffers: number; heapPhysical: number; malloced: number; spaces: Record<string, number> }

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const m = sorted.length >> 1
  return sorted.length % 2 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2
}

async function main() {
  const build = buildProject(ROOT)
  const req = requestOf(workload)
  const results = new Map<ServerName, Array<{ idle: Snap; peak: Snap; sampledPeak: number; reqPerSec: number; cpuUs: number; gc?: GcWindow }>>()
  try {
    // A 1 s warm-up in the load process itself, then `beforeWindow`, then `seconds` of measured load.
    const load = (port: number, beforeWindow: () => void): Promise<LoadResult> => {
      const spec: LoadSpec = { url: `http://127.0.0.1:${port}${req.path}`, connections, durationSec: seconds, warmupSec: 1, method: req.method, headers: req.headers, bodyBase64: req.body.toString('base64') }
      const file = join(build.dir, `mem-load-${seconds}.json`)
      writeFileSync(file, JSON.stringify(spec))
      return runLoad(join(build.dir, 'bench/load.js'), file, seconds, 1, beforeWindow)
    }
    for (let r = 0; r < rounds; r++) {
      for (const server of servers.map((_, i) => servers[(i + r) % servers.length])) {
        const probe = join(build.dir, `memprobe-${server.replace('@', '-')}-${r}.json`)
        const dir = server.endsWith('@B') ? ab! : build.dir
        const proc = spawnNode([...flags, '--expose-gc', '--import', join(build.dir, 'bench/memprobe.js'), join(dir, `bench/servers/${server.replace(/@B$/, '')}.js`)], {
          core: SERVER_CORE,
          env: { BENCH_WORKLOAD: workload, NODE_ENV: 'production', MEMPROBE_OUT: probe, ...extraEnv },
        })
        try {
          const port = await waitReady(proc)
          await new Promise((done) => setTimeout(done, 600))
          let sampler: ReturnType<typeof sampleRss> | undefined
          let from = 0
          let cpuBefore = 0
          const result = await load(port, () => {
            sampler = sampleRss(proc.child.pid, 100)
            from = proc.stdout().length
            cpuBefore = cpuMs(proc.child.pid) ?? 0
          }).catch((error: unknown) => {
            sampler?.stop()
            throw error
          })
          const cpuUs = (((cpuMs(proc.child.pid) ?? 0) - cpuBefore) * 1000) / Math.max(1, result.total)
          const gc = traceGc ? gcWindow(proc.stdout().slice(from), result.total) : undefined
          const sampledPeak = Math.max(...(sampler?.stop() ?? []), rssMiB(proc.child.pid) ?? 0)
          await new Promise((done) => setTimeout(done, 150))
          const { idle, peak } = JSON.parse(readFileSync(probe, 'utf8')) as { idle: Snap; peak: Snap }
          ;(results.get(server) ?? results.set(server, []).get(server)!).push({ idle, peak, sampledPeak, reqPerSec: result.reqPerSec, cpuUs, gc })
          process.stderr.write(`  round ${r + 1}/${rounds} ${server}: ${Math.round(result.reqPerSec)} req/s, idle ${idle.rss} MiB, peak ${peak.rss} MiB (heap ${peak.heapPhysical}, new ${peak.spaces.new_space}, old ${peak.spaces.old_space})\n`)
        } finally {
          await stop(proc)
        }
      }
    }
  } finally {
    killAll()
    build.remove()
  }
  const rows: string[][] = []
  const keys = ['rss', 'modules', 'heapPhysical', 'new_space', 'old_space', 'code_space', 'large_object_space', 'trusted_space', 'external', 'arrayBuffers', 'malloced', 'outside heap'] as const
  const pick = (snap: Snap, key: (typeof keys)[number]) =>
    key === 'outside heap' ? snap.rss - snap.heapPhysical : key in snap ? (snap as unknown as Record<string, number>)[key] : (snap.spaces[key] ?? 0)
  for (const key of keys) {
    rows.push([key, ...servers.flatMap((s) => [median(results.get(s)!.map((x) => pick(x.idle, key))).toFixed(1), median(results.get(s)!.map((x) => pick(x.peak, key))).toFixed(1)])])
  }
  rows.push(['req/s', ...servers.flatMap((s) => ['', String(Math.round(median(results.get(s)!.map((x) => x.reqPerSec))))])])
  rows.push(['server CPU µs / request', ...servers.flatMap((s) => ['', median(results.get(s)!.map((x) => x.cpuUs)).toFixed(1)])])
  if (traceGc) {
    const gcRow = (name: string, key: keyof GcWindow, digits: number) =>
      rows.push([name, ...servers.flatMap((s) => ['', median(results.get(s)!.map((x) => x.gc![key])).toFixed(digits)])])
    gcRow('bytes allocated / request', 'allocatedPerReq', 0)
    gcRow('bytes promoted / request', 'promotedPerReq', 1)
    gcRow('scavenges / 10k requests', 'scavengesPer10k', 1)
    gcRow('mark-compacts in window', 'markCompacts', 0)
    gcRow('bytes surviving a scavenge', 'survivedPerScavenge', 0)
  }
  rows.push(['sampled peak RSS (bench)', ...servers.flatMap((s) => ['', median(results.get(s)!.map((x) => x.sampledPeak)).toFixed(1)])])
  const head = ['MiB (medians)', ...servers.flatMap((s) => [`${s} idle`, `${s} peak`])]
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)))
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')
  process.stdout.write(`Node ${process.version}, ${workload}, ${connections} connections, ${rounds} round(s) × ${seconds} s${flags.length ? `, flags ${flags.join(' ')}` : ''}${Object.keys(extraEnv).length ? `, env ${process.env.MEM_ENV}` : ''}\n${line(head)}\n${rows.map(line).join('\n')}\n`)
}

process.on('exit', killAll)
main().catch((error: unknown) => {
  killAll()
  console.error(error)
  process.exitCode = 1
})
