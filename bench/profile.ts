/**
 * `tsx bench/profile.ts [server] [workload] [seconds]`: runs one benchmark server under
 * `node --cpu-prof` (compiled, pinned like the bench), loads it with autocannon, writes
 * bench/results/<server>-<workload>.cpuprofile and prints where the time went: self time by
 * function and by module. Defaults: fastify-actions, execute-small, 10 s. The curves' workloads
 * (payload-1kb, payload-64kb, payload-1mb, upload-10mb) are accepted too.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildProject } from './build.js'
import { killAll, LOAD_CORE, SERVER_CORE, spawnNode, stop, waitExit, waitReady } from './procs.js'
import { CURVE_WORKLOADS, requestOf, SERVERS, WORKLOADS, type AnyWorkloadName, type ServerName } from './shared.js'
import type { LoadSpec } from './load.js'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const server = (process.argv[2] ?? 'fastify-actions') as ServerName
const workload = (process.argv[3] ?? 'execute-small') as AnyWorkloadName
const known: readonly string[] = [...WORKLOADS, ...CURVE_WORKLOADS]
const seconds = Number(process.argv[4] ?? 10)
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

function summarize(profile: Profile, buildDir: string): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const self = new Map<number, number>()
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
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
      .map(([key, time]) => `${((time / busy) * 100).toFixed(1).padStart(5)} %  ${key}`)
  return [
    `busy ${(busy / 1e6).toFixed(2)} s of ${(total / 1e6).toFixed(2)} s sampled (percentages of busy time)`,
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
}

const build = buildProject(ROOT)
try {
  const profileDir = join(build.dir, 'profile')
  mkdirSync(profileDir)
  const proc = spawnNode(['--cpu-prof', `--cpu-prof-dir=${profileDir}`, join(build.dir, `bench/servers/${server}.js`)], {
    core: SERVER_CORE,
    env: { BENCH_WORKLOAD: workload, NODE_ENV: 'production' },
  })
  const port = await waitReady(proc)
  const req = requestOf(workload)
  const spec: LoadSpec = {
    url: `http://127.0.0.1:${port}${req.path}`,
    connections: workload === 'upload-1mb' || workload === 'upload-10mb' ? 4 : 32,
    durationSec: seconds,
    method: req.method,
    headers: req.headers,
    bodyBase64: req.body.toString('base64'),
  }
  const specFile = join(build.dir, 'spec.json')
  writeFileSync(specFile, JSON.stringify(spec))
  const out = await waitExit(spawnNode([join(build.dir, 'bench/load.js'), specFile], { core: LOAD_CORE }), (seconds + 60) * 1000)
  process.stdout.write(`load: ${out.trim()}\n`)
  proc.child.stdin?.end() // the server exits on its own, so --cpu-prof writes the profile
  await waitExit(proc, 30_000).catch(() => stop(proc))
  const file = readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'))
  if (!file) throw new Error('no profile was written')
  const target = join(ROOT, 'bench/results', `${server}-${workload}.cpuprofile`)
  mkdirSync(dirname(target), { recursive: true })
  copyFileSync(join(profileDir, file), target)
  process.stdout.write(`${summarize(JSON.parse(readFileSync(target, 'utf8')) as Profile, build.dir)}\n\nprofile: ${target}\n`)
} finally {
  killAll()
  build.remove()
}
