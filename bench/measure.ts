/**
 * One measurement of one server on one workload, shared by `npm run bench` (bench/run.ts) and
 * `npm run bench:paired` (bench/paired.ts): a fresh server process on the server core, a precheck of
 * its answer against the contract (once per workload and server), the load process's warm-up, then
 * the measured window with the server's CPU time and RSS taken around it.
 */
import { request as httpRequest } from 'node:http'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Build } from './build.js'
import type { LoadResult, LoadSpec } from './load.js'
import { cpuMs, rssMiB, runLoad, sampleRss, SERVER_CORE, spawnNode, stop, waitReady } from './procs.js'
import {
  CORS_HEADERS,
  CURVE_SERVERS,
  expectedBody,
  IDEMPOTENCY_HEADER,
  SERVED_BY,
  type AnyWorkloadName,
  type BenchRequest,
  type ServerName,
} from './shared.js'

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

function send(port: number, req: BenchRequest, headers = req.headers): Promise<Answer> {
  return new Promise((resolvePromise, reject) => {
    const outgoing = httpRequest(
      { host: '127.0.0.1', port, method: req.method, path: req.path, headers: { ...headers, 'content-length': req.body.length } },
      (incoming) => {
        const chunks: Buffer[] = []
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
        incoming.on('end', () => resolvePromise({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: Buffer.concat(chunks).toString('utf8') }))
      },
    )
    outgoing.setTimeout(10_000, () => outgoing.destroy(new Error('timeout')))
    outgoing.on('error', reject)
    outgoing.end(req.body)
  })
}

export type Verdict = { notes: string[]; skip?: string }

/**
 * Sends the workload's request once and compares status, body bytes and the cross-origin headers with
 * the contract. Returns the differences; `skip` when fastify-actions cannot do the workload yet.
 */
export async function precheck(workload: AnyWorkloadName, server: ServerName, port: number, req: BenchRequest): Promise<Verdict> {
  const notes: string[] = []
  const answer = await send(port, req)
  const expected = expectedBody(workload)
  if (workload === 'execute-protected') {
    const { authorization: _, ...withoutToken } = req.headers
    const anonymous = await send(port, req, withoutToken)
    if (anonymous.status !== 401) {
      const reason = `auth not enforced (no token answered ${anonymous.status}, expected 401)`
      if (server === 'fastify-actions') return { notes, skip: reason }
      notes.push(reason)
    }
  }
  if (answer.status !== 200 || answer.body !== expected) {
    const reason = `answered ${answer.status} ${answer.body.slice(0, 160)}`
    if (server === 'fastify-actions' && answer.status !== 200) return { notes, skip: reason }
    // A curve compares fastify-actions with fastify-bare only: a peer that answers something else is no peer.
    if (SERVED_BY[workload]?.servers === CURVE_SERVERS) return { notes, skip: `${reason}; expected 200 ${expected.slice(0, 160)}` }
    notes.push(`${reason}; expected 200 ${expected.slice(0, 160)}`)
  }
  for (const [name, value] of Object.entries(CORS_HEADERS)) {
    const got = answer.headers[name]
    if (got !== value) notes.push(`header ${name}: ${got === undefined ? 'missing' : JSON.stringify(got)} (expected ${JSON.stringify(value)})`)
  }
  return { notes }
}

/** One measurement: a server process for one workload, at a connection count, for a warm-up and a measured window. */
export interface Job {
  workload: AnyWorkloadName
  server: ServerName
  req: BenchRequest
  connections: number
  warmupSec: number
  durationSec: number
}

function writeSpec(build: Build, job: Job, port: number): string {
  const spec: LoadSpec = {
    url: `http://127.0.0.1:${port}${job.req.path}`,
    connections: job.connections,
    durationSec: job.durationSec,
    warmupSec: job.warmupSec,
    method: job.req.method,
    headers: job.req.headers,
    bodyBase64: job.req.body.toString('base64'),
    ...(job.workload === 'execute-idempotent' ? { uniqueHeader: IDEMPOTENCY_HEADER } : {}),
  }
  const file = join(build.dir, `load-${job.workload}-${job.connections}-${job.durationSec}.json`)
  writeFileSync(file, JSON.stringify(spec))
  return file
}

export interface Sample {
  load: LoadResult
  rssIdle: number | null
  rssPeak: number | null
  /** Server CPU time per answered request in µs: steadier than req/s on a busy machine. */
  cpuUs: number | null
}

export async function measure(build: Build, job: Job, checked: Map<string, Verdict>): Promise<Sample | { skip: string }> {
  const { workload, server } = job
  const proc = spawnNode([join(build.dir, `bench/servers/${server}.js`)], { core: SERVER_CORE, env: { BENCH_WORKLOAD: workload, NODE_ENV: 'production' } })
  try {
    const port = await waitReady(proc)
    await new Promise((r) => setTimeout(r, 200))
    const rssIdle = rssMiB(proc.child.pid)
    const key = `${workload}/${server}`
    if (!checked.has(key)) checked.set(key, await precheck(workload, server, port, job.req))
    const verdict = checked.get(key)!
    if (verdict.skip) return { skip: verdict.skip }
    // The warm-up runs in the load process itself; the baselines are taken when its window starts.
    let sampler: ReturnType<typeof sampleRss> | undefined
    let cpuBefore: number | null = null
    let load: LoadResult
    try {
      load = await runLoad(join(build.dir, 'bench/load.js'), writeSpec(build, job, port), job.durationSec, job.warmupSec, () => {
        sampler = sampleRss(proc.child.pid)
        cpuBefore = cpuMs(proc.child.pid)
      })
    } catch (error) {
      sampler?.stop()
      throw error
    }
    const cpuAfter = cpuMs(proc.child.pid)
    const samples = sampler?.stop() ?? []
    const cpuUs = cpuBefore !== null && cpuAfter !== null && load.total > 0 ? ((cpuAfter - cpuBefore) * 1000) / load.total : null
    return { load, rssIdle, rssPeak: samples.length > 0 ? Math.max(...samples) : null, cpuUs }
  } finally {
    await stop(proc)
  }
}
