/**
 * Preloaded into a benchmark server by bench/memory.ts (`node --import <build>/bench/memprobe.js`):
 * records the process's memory every 100 ms and writes, to the file named by MEMPROBE_OUT, the
 * breakdown at the highest RSS seen so far (process.memoryUsage() and V8's heap spaces, committed
 * sizes), and once, 300 ms after start, the idle baseline (after `gc()` when --expose-gc is given).
 */
import { writeFileSync } from 'node:fs'
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8'

const out = process.env.MEMPROBE_OUT
const MiB = 1024 * 1024
const mib = (n: number) => Math.round((n / MiB) * 10) / 10

function snapshot() {
  const usage = process.memoryUsage()
  const spaces: Record<string, number> = {}
  for (const space of getHeapSpaceStatistics()) spaces[space.space_name] = mib(space.physical_space_size)
  const heap = getHeapStatistics()
  return {
    rss: mib(usage.rss),
    heapTotal: mib(usage.heapTotal),
    heapUsed: mib(usage.heapUsed),
    external: mib(usage.external),
    arrayBuffers: mib(usage.arrayBuffers),
    heapPhysical: mib(heap.total_physical_size),
    malloced: mib(heap.malloced_memory),
    // Node's own modules loaded so far (process.moduleLoadList, undocumented): catches a builtin loaded by a request.
    modules: (process as unknown as { moduleLoadList: string[] }).moduleLoadList.length,
    spaces,
  }
}

if (out) {
  let idle: ReturnType<typeof snapshot> | undefined
  let peak: ReturnType<typeof snapshot> | undefined
  const gc = (globalThis as { gc?: () => void }).gc
  const write = () => writeFileSync(out, JSON.stringify({ idle, peak }))
  setTimeout(() => {
    if (gc) for (let i = 0; i < 4; i++) gc()
    idle = snapshot()
    write()
    setInterval(() => {
      const now = snapshot()
      if (!peak || now.rss > peak.rss) {
        peak = now
        write()
      }
    }, 100).unref()
  }, 300).unref()
}
