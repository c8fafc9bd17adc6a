/**
 * `npx tsx bench/compression.ts`: the execute workloads with response compression on (the default)
 * and off, as a browser calls them (`Accept-Encoding: gzip, deflate, br`), A/B interleaved over the
 * rounds (the order alternates each round), medians reported; `execute-small, no Accept-Encoding` is
 * the same load from a client that asks for no coding (curl, a server-side caller). Their answers are
 * under the 1 KiB threshold: what is measured is the cost of deciding not to compress.
 * Environment: BENCH_ROUNDS (5), BENCH_DURATION (4 s), BENCH_WARMUP (1 s), BENCH_CONNECTIONS (50).
 */
import { writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildProject } from './build.js'
import { cpuMs, killAll, runLoad, SERVER_CORE, spawnNode, stop, waitReady } from './procs.js'
import type { LoadSpec } from './load.js'
import { requestOf, type WorkloadName } from './shared.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
const durationSec = Number(process.env.BENCH_DURATION ?? 4)
const warmupSec = Number(process.env.BENCH_WARMUP ?? 1)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)
const BROWSER = 'gzip, deflate, br'
/** Each case: a workload and the `Accept-Encoding` its client sends (none: the header left out). */
const cases: Array<{ name: string; workload: WorkloadName; acceptEncoding?: string }> = [
  { name: 'execute-small', workload: 'execute-small', acceptEncoding: BROWSER },
  { name: 'execute-small, no Accept-Encoding', workload: 'execute-small' },
  { name: 'execute-output', workload: 'execute-output', acceptEncoding: BROWSER },
  { name: 'execute-hooks', workload: 'execute-hooks', acceptEncoding: BROWSER },
  { name: 'execute-protected', workload: 'execute-protected', acceptEncoding: BROWSER },
]
const variants = ['on', 'off'] as const

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const build = buildProject(ROOT)
const results: Record<string, Record<string, { rps: number[]; cpuUs: number[] }>> = {}
try {
  for (let round = 0; round < rounds; round++) {
    for (const [index, { name, workload, acceptEncoding }] of cases.entries()) {
      const order = round % 2 === 0 ? variants : [...variants].reverse()
      for (const variant of order) {
        const proc = spawnNode([join(build.dir, 'bench/servers/fastify-actions.js')], {
          core: SERVER_CORE,
          env: { BENCH_WORKLOAD: workload, NODE_ENV: 'production', BENCH_COMPRESSION: variant },
        })
        try {
          const port = await waitReady(proc)
          const request = requestOf(workload)
          const spec: LoadSpec = {
            url: `http://127.0.0.1:${port}${request.path}`,
            connections,
            durationSec,
            warmupSec,
            method: request.method,
            headers: acceptEncoding === undefined ? request.headers : { ...request.headers, 'accept-encoding': acceptEncoding },
            bodyBase64: request.body.toString('base64'),
          }
          const file = join(build.dir, `compression-${index}-${variant}.json`)
          writeFileSync(file, JSON.stringify(spec))
          let before: number | null = null
          const load = await runLoad(join(build.dir, 'bench/load.js'), file, durationSec, warmupSec, () => (before = cpuMs(proc.child.pid)))
          const after = cpuMs(proc.child.pid)
          if (load.non2xx > 0 || load.errors > 0) throw new Error(`${name}/${variant}: ${load.non2xx} non-2xx, ${load.errors} errors`)
          const slot = ((results[name] ??= {})[variant] ??= { rps: [], cpuUs: [] })
          slot.rps.push(load.reqPerSec)
          if (before !== null && after !== null) slot.cpuUs.push(((after - before) * 1000) / load.total)
          console.error(`round ${round + 1} ${name} ${variant}: ${Math.round(load.reqPerSec)} req/s`)
        } finally {
          await stop(proc)
        }
      }
    }
  }
  console.log(`| workload | compression off (req/s) | on (req/s) | on / off | CPU µs/req off | on |`)
  console.log(`|---|---:|---:|---:|---:|---:|`)
  for (const { name } of cases) {
    const off = results[name]!.off!
    const on = results[name]!.on!
    const ratio = median(on.rps) / median(off.rps)
    console.log(
      `| ${name} | ${Math.round(median(off.rps))} | ${Math.round(median(on.rps))} | ${(ratio * 100).toFixed(1)} % | ${median(off.cpuUs).toFixed(1)} | ${median(on.cpuUs).toFixed(1)} |`,
    )
  }
} finally {
  killAll()
  build.remove()
}
