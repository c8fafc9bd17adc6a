/**
 * How long `fastify-actions mcp` (stdio) takes to be ready: spawns the project's own CLI, writes MCP
 * `initialize`, waits for its answer, writes `notifications/initialized` and `tools/list`, waits for
 * that answer, then closes stdin. Each run reports, from the spawn:
 *
 * - wall time to the answer of `initialize` and to the answer of `tools/list` ("ready");
 * - CPU time (user + system) of the CLI's process at the moment `tools/list` was answered, read from
 *   /proc/<pid>/stat (Linux; every thread of the process counts). The steadier figure on a shared
 *   machine: wall time stretches with the load, CPU time much less.
 *
 * Usage (from this repository, or anywhere tsx runs):
 *
 *   npx tsx bench/mcp-ready.ts <project dir> [--runs 10] [--cold] [--json]
 *
 * `<project dir>` is a project made by `fastify-actions new` (its `node_modules/fastify-actions` an
 * installed package, e.g. from `npm pack`'s tarball: `npx fastify-actions new my-app --from
 * /path/to/fastify-actions-0.1.0.tgz`). The CLI run is the project's own,
 * `node node_modules/fastify-actions/dist/lib/cli/bin.js mcp` (what `npx fastify-actions mcp` runs,
 * without npx's own start-up). One unmeasured run comes first (it makes the PGlite data folder, the
 * kept bundle of the config and, on Node 22.1+, V8's compile cache), then `--runs` measured ones:
 *
 * - warm (default): the kept bundle of the config and the compile cache are used, as an agent's
 *   second and later starts;
 * - `--cold`: before each run the kept bundle (`node_modules/.cache/fastify-actions/`) is removed and
 *   the V8 compile cache points at a new empty folder, as the first start after an install or a change.
 *
 * Prints each run, then the median, min and max of each figure and the load average before and after
 * (the machine's state: a measurement on a loaded machine says so). `--json` prints one JSON object.
 * Runs one at a time, nothing else in parallel; the project's PGlite folder is the one it uses anyway.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'

interface Sample {
  initializeMs: number
  readyMs: number
  cpuMs: number
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { runs: { type: 'string', default: '10' }, cold: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } },
})
const project = positionals[0] ? resolve(positionals[0]) : undefined
const runs = Number(values.runs)
if (!project || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: npx tsx bench/mcp-ready.ts <project dir> [--runs 10] [--cold] [--json]')
  process.exit(2)
}
const bin = join(project, 'node_modules', 'fastify-actions', 'dist', 'lib', 'cli', 'bin.js')
if (!existsSync(bin)) {
  console.error(`${bin} not found: the project's fastify-actions must be an installed package (fastify-actions new ... --from <tarball>)`)
  process.exit(2)
}

/** Clock ticks a second of /proc's CPU times (USER_HZ: 100 on every Linux this runs on). */
const TICKS = 100

/** User + system CPU time of a process so far, in ms, from /proc/<pid>/stat; NaN off Linux. */
function cpuOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command's name (in parentheses, which may hold spaces): utime is the 14th field, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS
  } catch {
    return Number.NaN
  }
}

/** The environment of a user's shell: none of a test runner's or of npm's variables. */
function userEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(npm_|NODE_OPTIONS$|NODE_ENV$|TAP|_TAP|NODE_COMPILE_CACHE$)/i.test(name)) env[name] = value
  }
  return { ...env, ...extra }
}

const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'mcp-ready', version: '1' } } }
const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' }
const toolsList = { jsonrpc: '2.0', id: 2, method: 'tools/list' }

/** One start of `fastify-actions mcp`, measured; rejects when it does not answer within a minute. */
function once(cold: boolean): Promise<Sample> {
  const extra: Record<string, string> = {}
  let cache: string | undefined
  if (cold) {
    rmSync(join(project!, 'node_modules', '.cache', 'fastify-actions'), { recursive: true, force: true })
    cache = mkdtempSync(join(tmpdir(), 'mcp-ready-v8-'))
    extra.NODE_COMPILE_CACHE = cache
  }
  return new Promise<Sample>((resolvePromise, reject) => {
    const started = process.hrtime.bigint()
    const elapsed = () => Number(process.hrtime.bigint() - started) / 1e6
    const child = spawn(process.execPath, [bin, 'mcp'], { cwd: project, env: userEnv(extra), stdio: ['pipe', 'pipe', 'pipe'] })
    let stderr = ''
    let text = ''
    let initializeMs = 0
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`no answer within 60 s\n${stderr}`))
    }, 60_000)
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString()
      for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n')) {
        const message = JSON.parse(text.slice(0, newline)) as { id?: number; result?: { tools?: unknown[] }; error?: unknown }
        text = text.slice(newline + 1)
        if (message.error) return reject(new Error(`error answer: ${JSON.stringify(message.error)}`))
        if (message.id === 1) {
          initializeMs = elapsed()
          child.stdin.write(`${JSON.stringify(initialized)}\n${JSON.stringify(toolsList)}\n`)
        } else if (message.id === 2) {
          const readyMs = elapsed()
          const cpuMs = cpuOf(child.pid!)
          if (!Array.isArray(message.result?.tools) || message.result.tools.length === 0) return reject(new Error('tools/list answered no tools'))
          clearTimeout(timer)
          child.stdin.end()
          child.once('exit', () => {
            if (cache) rmSync(cache, { recursive: true, force: true })
            resolvePromise({ initializeMs, readyMs, cpuMs })
          })
        }
      }
    })
    child.once('error', reject)
    child.stdin.write(`${JSON.stringify(initialize)}\n`)
  })
}

const median = (list: number[]) => {
  const sorted = [...list].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}
const stats = (list: number[]) => ({ median: Math.round(median(list)), min: Math.round(Math.min(...list)), max: Math.round(Math.max(...list)) })

const loadBefore = loadavg().map((load) => load.toFixed(2))
await once(false) // unmeasured: the data folder, the kept bundle and the compile cache exist after it
const samples: Sample[] = []
for (let run = 0; run < runs; run++) {
  const sample = await once(values.cold)
  samples.push(sample)
  if (!values.json) console.log(`run ${run + 1}: initialize ${sample.initializeMs.toFixed(0)} ms, tools/list ${sample.readyMs.toFixed(0)} ms, CPU ${sample.cpuMs.toFixed(0)} ms`)
}
const loadAfter = loadavg().map((load) => load.toFixed(2))
const summary = {
  start: values.cold ? 'cold' : 'warm',
  runs,
  node: process.version,
  cores: cpus().length,
  initializeMs: stats(samples.map((s) => s.initializeMs)),
  readyMs: stats(samples.map((s) => s.readyMs)),
  cpuMs: stats(samples.map((s) => s.cpuMs)),
  loadBefore,
  loadAfter,
}
if (values.json) console.log(JSON.stringify(summary))
else {
  const line = (name: string, s: { median: number; min: number; max: number }) => `${name}: median ${s.median} ms (min ${s.min}, max ${s.max})`
  console.log(`\n${summary.start} start, ${runs} runs, Node ${summary.node}, ${summary.cores} cores`)
  console.log(line('wall to initialize', summary.initializeMs))
  console.log(line('wall to tools/list (ready)', summary.readyMs))
  console.log(line('CPU (user + system) at ready', summary.cpuMs))
  console.log(`load average (1, 5, 15 min): before ${loadBefore.join(' ')}, after ${loadAfter.join(' ')}`)
}
