/**
 * `tsx bench/profile.ts [server] [workload] [seconds]`: runs one benchmark server under
 * `node --cpu-prof` (compiled, pinned like the bench), loads it with autocannon, writes
 * bench/results/<server>-<workload>.cpuprofile and prints where the time went: self time by
 * function and by module. Defaults: fastify-actions, execute-small, 10 s. The curves' workloads
 * (payload-1kb, payload-64kb, payload-1mb, upload-10mb) are accepted too.
 *
 * The load process warms the server up for BENCH_PROFILE_WARMUP seconds (default 3) first; only the
 * samples of the measured window that follows count in the summary (V8's profile timestamps and
 * this process's `process.hrtime` are the same monotonic clock). Beside the shares it prints µs per
 * request by category (Fastify, ours, scope, validation, GC, socket and HTTP, ...), and, from the
 * server's `--trace-gc` lines of the same window, scavenges and mark-compacts per 1,000 requests
 * and their pauses; bench/results/profile-<server>-<workload>-node<major>.json keeps the summary
 * (the .cpuprofile is not committed).
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildProject } from './build.js'
import { killAll, runLoad, SERVER_CORE, spawnNode, stop, waitExit, waitReady } from './procs.js'
import { CURVE_WORKLOADS, requestOf, SERVERS, WORKLOADS, type AnyWorkloadName, type ServerName } from './shared.js'
import type { LoadSpec } from './load.js'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  startTime: number
  samples: number[]
  timeDeltas: number[]
}
/** The measured window in µs of the monotonic clock (V8's profile timestamps). */
interface Window {
  from: number
  to: number
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const server = (process.argv[2] ?? 'fastify-actions') as ServerName
const workload = (process.argv[3] ?? 'execute-small') as AnyWorkloadName
const known: readonly string[] = [...WORKLOADS, ...CURVE_WORKLOADS]
const seconds = Number(process.argv[4] ?? 10)
const warmupSec = Number(process.env.BENCH_PROFILE_WARMUP ?? 3)
if (!SERVERS.includes(server) || !known.includes(workload)) throw new Error(`usage: profile.ts [${SERVERS.join('|')}] [${known.join('|')}] [seconds]`)

/** Groups a frame by where it lives: our code by file, packages by name, node internals, the rest. */
function moduleOf(url: string, buildDir: string): string {
  if (url === '') return '(native / GC / idle)'
  if (url.startsWith('node:')) return url
  const packaged = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (packaged) return packaged[1]
  if (url.includes(buildDir)) return url.slice(url.indexOf(buildDir) + buildDir.length + 1)
  return url
}

/**
 * The category of a frame, for the per-request difference table of docs/benchmarks.md: what bare
 * Fastify does too (Fastify and its packages, Node's HTTP and socket), and what fastify-actions adds
 * (its own files, the request scope, TypeBox). `url` empty: V8 builtins, native code and code made by
 * `new Function` (the compiled validators and serializers).
 */
export function categoryOf(functionName: string, url: string, buildDir: string): string {
  if (functionName === '(garbage collector)') return 'GC'
  if (functionName === '(program)') return 'V8 and native (program)'
  // Native calls of the socket (the answer's write, the request's read) count with Node's HTTP.
  if (url === '' && /^(?:writev|writeUtf8String|writeLatin1String|writeBuffer|onStreamRead|readStart|readStop|shutdown|close)$/.test(functionName)) return 'Node HTTP, streams, socket, timers'
  if (url === '') return 'url-less JS (builtins, RegExp, new Function code)'
  if (/^node:(?:async_hooks|internal\/async_hooks|internal\/async_local_storage|internal\/async_context_frame)/.test(url)) return 'scope: AsyncLocalStorage and async hooks (node)'
  if (url.startsWith('node:')) {
    if (/^node:(?:net|_http|internal\/http|http|internal\/stream|stream|internal\/streams|events|internal\/event_target|internal\/net|internal\/dtrace|internal\/timers|timers|internal\/process\/task_queues)/.test(url)) return 'Node HTTP, streams, socket, timers'
    return 'other Node internals'
  }
  const packaged = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (packaged) {
    const name = packaged[1]
    if (name === 'typebox' || name === '@sinclair/typebox' || name.startsWith('ajv')) return 'validation (TypeBox, Ajv)'
    if (name === 'fast-json-stringify') return 'serialization (fast-json-stringify)'
    if (name === 'fastify' || name.startsWith('@fastify/') || ['find-my-way', 'avvio', 'light-my-request', 'secure-json-parse', 'fast-content-type-parse', 'toad-cache', 'fast-querystring', 'abstract-logging', 'pino', 'fastq', 'reusify', 'rfdc', 'proxy-addr', 'fast-decode-uri-component', 'process-warning', 'fast-uri', 'content-type', 'vary'].includes(name)) return 'Fastify and its packages'
    return `package ${name}`
  }
  if (url.includes(buildDir)) {
    const file = url.slice(url.indexOf(buildDir) + buildDir.length + 1)
    if (file.startsWith('bench/')) return 'the server script (bench/servers)'
    if (/^(?:lib\/context|plugins\/request-scope)\.js$/.test(file)) return 'scope: ours (lib/context, plugins/request-scope)'
    if (/^lib\/(?:validation|schema-check|standard-schema)\.js$/.test(file)) return 'validation (ours)'
    if (/^lib\/(?:engine|steps|result|answer|output|envelope|messages|registry|errors|handle-error|declared-errors|cancellation|action|service)\.js$/.test(file)) return 'ours: engine, result, envelope'
    if (file.startsWith('plugins/')) return 'ours: plugins (endpoint, body, CORS, hosts, ...)'
    return `ours: ${file}`
  }
  return 'other'
}

interface Summary {
  busyMs: number
  requests: number
  /** µs of busy time per request, by category (categoryOf). */
  usPerRequest: Record<string, number>
  /** The same as shares of busy time, in %. */
  share: Record<string, number>
}

function summarize(profile: Profile, buildDir: string, window: Window, requests: number): { text: string; summary: Summary } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const self = new Map<number, number>()
  let at = profile.startTime
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0
    if (at >= window.from && at <= window.to) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
  })
  // Inclusive time: a node's own samples plus its subtree's.
  const inclusive = new Map<number, number>()
  const totalOf = (id: number): number => {
    const node = byId.get(id)!
    const sum = (self.get(id) ?? 0) + (node.children ?? []).reduce((acc, child) => acc + totalOf(child), 0)
    inclusive.set(id, sum)
    return sum
  }
  const roots = profile.nodes.filter((node) => !profile.nodes.some((parent) => parent.children?.includes(node.id)))
  roots.forEach((root) => totalOf(root.id))

  let idle = 0
  let total = 0
  const byFunction = new Map<string, number>()
  const byModule = new Map<string, number>()
  const byCategory = new Map<string, number>()
  for (const [id, time] of self) {
    total += time
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame
    if (functionName === '(idle)') {
      idle += time
      continue
    }
    const where = url === '' ? `(${functionName || 'native'})` : moduleOf(url, buildDir)
    const key = `${functionName || '(anonymous)'}  ${where}${url ? `:${lineNumber + 1}` : ''}`
    byFunction.set(key, (byFunction.get(key) ?? 0) + time)
    byModule.set(where, (byModule.get(where) ?? 0) + time)
    const category = categoryOf(functionName, url, buildDir)
    byCategory.set(category, (byCategory.get(category) ?? 0) + time)
  }
  // Inclusive time of the project's own functions (outermost occurrence only, so recursion is not counted twice).
  const ours = new Map<string, number>()
  const walk = (id: number, seen: Set<string>) => {
    const node = byId.get(id)!
    const { functionName, url, lineNumber } = node.callFrame
    let next = seen
    if (url.includes(buildDir) && !url.includes('/node_modules/')) {
      const key = `${functionName || '(anonymous)'}  ${moduleOf(url, buildDir)}:${lineNumber + 1}`
      if (!seen.has(key)) {
        ours.set(key, (ours.get(key) ?? 0) + (inclusive.get(id) ?? 0))
        next = new Set(seen).add(key)
      }
    }
    for (const child of node.children ?? []) walk(child, next)
  }
  roots.forEach((root) => walk(root.id, new Set()))

  const busy = total - idle
  const top = (map: Map<string, number>, n: number) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([key, time]) => `${((time / busy) * 100).toFixed(1).padStart(5)} %  ${(time / requests).toFixed(2).padStart(6)} µs/req  ${key}`)
  const sorted = [...byCategory].sort((a, b) => b[1] - a[1])
  const summary: Summary = {
    busyMs: Math.round(busy / 1000),
    requests,
    usPerRequest: Object.fromEntries(sorted.map(([key, time]) => [key, Math.round((time / requests) * 100) / 100])),
    share: Object.fromEntries(sorted.map(([key, time]) => [key, Math.round((time / busy) * 1000) / 10])),
  }
  const text = [
    `measured window: busy ${(busy / 1e6).toFixed(2)} s of ${(total / 1e6).toFixed(2)} s sampled, ${requests} requests, ${(busy / requests).toFixed(2)} µs busy per request (profiler-inflated)`,
    '',
    'self time by category:',
    ...top(byCategory, 20),
    '',
    'self time by module:',
    ...top(byModule, 25),
    '',
    'self time by function:',
    ...top(byFunction, 40),
    '',
    'inclusive time of the project\'s functions:',
    ...top(ours, 25),
  ].join('\n')
  return { text, summary }
}

/** Scavenges and mark-compacts in `--trace-gc` output, with their pauses (ms). */
function gcOf(trace: string, requests: number) {
  const pauses = { scavenge: [] as number[], markCompact: [] as number[] }
  for (const line of trace.split('\n')) {
    const pause = /MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms/.exec(line)
    if (!pause) continue
    if (line.includes('Scavenge')) pauses.scavenge.push(Number(pause[1]))
    else if (/Mark-Compact|Mark-sweep|Mark-Sweep/.test(line)) pauses.markCompact.push(Number(pause[1]))
  }
  const describe = (list: number[]) => {
    const sorted = [...list].sort((a, b) => a - b)
    const sum = list.reduce((a, b) => a + b, 0)
    return {
      count: list.length,
      per1000Requests: Math.round((list.length / requests) * 1000 * 1000) / 1000,
      totalMs: Math.round(sum * 10) / 10,
      medianMs: sorted.length ? sorted[sorted.length >> 1] : 0,
      maxMs: sorted.length ? sorted[sorted.length - 1] : 0,
    }
  }
  return { scavenge: describe(pauses.scavenge), markCompact: describe(pauses.markCompact) }
}

const build = buildProject(ROOT)
try {
  const profileDir = join(build.dir, 'profile')
  mkdirSync(profileDir)
  const proc = spawnNode(['--cpu-prof', `--cpu-prof-dir=${profileDir}`, '--trace-gc', join(build.dir, `bench/servers/${server}.js`)], {
    core: SERVER_CORE,
    env: { BENCH_WORKLOAD: workload, NODE_ENV: 'production' },
  })
  const port = await waitReady(proc)
  const req = requestOf(workload)
  const spec: LoadSpec = {
    url: `http://127.0.0.1:${port}${req.path}`,
    connections: workload === 'upload-1mb' || workload === 'upload-10mb' ? 4 : 32,
    durationSec: seconds,
    warmupSec,
    method: req.method,
    headers: req.headers,
    bodyBase64: req.body.toString('base64'),
  }
  const specFile = join(build.dir, 'spec.json')
  writeFileSync(specFile, JSON.stringify(spec))
  const now = () => Number(process.hrtime.bigint() / 1000n)
  let from = 0
  let traceFrom = 0
  const load = await runLoad(join(build.dir, 'bench/load.js'), specFile, seconds, warmupSec, () => {
    from = now()
    traceFrom = proc.stdout().length
  })
  const window: Window = { from, to: now() }
  const trace = proc.stdout().slice(traceFrom)
  process.stdout.write(`load: ${JSON.stringify(load)}\n`)
  proc.child.stdin?.end() // the server exits on its own, so --cpu-prof writes the profile
  await waitExit(proc, 30_000).catch(() => stop(proc))
  const file = readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'))
  if (!file) throw new Error('no profile was written')
  const target = join(ROOT, 'bench/results', `${server}-${workload}.cpuprofile`)
  mkdirSync(dirname(target), { recursive: true })
  copyFileSync(join(profileDir, file), target)
  const profile = JSON.parse(readFileSync(target, 'utf8')) as Profile
  if (profile.startTime > window.to) throw new Error('the profile starts after the measured window: the clocks differ')
  const { text, summary } = summarize(profile, build.dir, window, load.total)
  const gc = gcOf(trace, load.total)
  const major = process.versions.node.split('.')[0]
  const record = { server, workload, node: process.version, date: new Date().toISOString(), loadAverage: loadavg().map((v) => Math.round(v * 100) / 100), seconds, warmupSec, load, ...summary, gc }
  writeFileSync(join(ROOT, 'bench/results', `profile-${server}-${workload}-node${major}.json`), `${JSON.stringify(record, null, 2)}\n`)
  process.stdout.write(
    `${text}\n\ngarbage collections in the window (--trace-gc): scavenges ${JSON.stringify(gc.scavenge)}, mark-compacts ${JSON.stringify(gc.markCompact)}\n` +
      `load average ${record.loadAverage.join(' ')}\nprofile: ${target}\n`,
  )
} finally {
  killAll()
  build.remove()
}
