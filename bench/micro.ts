/**
 * In-process micro-benchmarks of fastify-actions: boot time and per-call dispatch cost with 1, 100
 * and 10,000 registered actions (engine.executeAction and app.inject), and app.fetch against
 * app.inject. argv[2]: where to write the JSON result; BENCH_QUICK=1 for short batches.
 * BENCH_MICRO_ONLY=fetch: app.fetch against app.inject and the floor only (no boots, no dispatch), with
 * BENCH_FETCH_ROUNDS interleaved windows of BENCH_FETCH_WINDOW_MS each; `npm run bench:paired` uses
 * it for the app.fetch-vs-floor pair and reads the per-window rates (`fetchVsInject.windows`).
 */
import { writeFileSync } from 'node:fs'
import Type from 'typebox'
import { createAction, createServer, Ok, type Action, type ServerInstance } from '../lib/index.js'
import { ENDPOINT, ORIGIN, TASK } from './shared.js'

const quick = process.env.BENCH_QUICK === '1'
const SIZES = [1, 100, 10_000]
const ROUNDS = quick ? 1 : 3
const BATCHES = quick ? 3 : 5
const EXECUTE_CALLS = quick ? 20_000 : 50_000
const INJECT_CALLS = quick ? 2_000 : 5_000
const FETCH_WINDOW_MS = Number(process.env.BENCH_FETCH_WINDOW_MS ?? (quick ? 1_000 : 2_000))
// Interleaved windows per call kind: at least five, so that one disturbed window does not move the median.
const FETCH_ROUNDS = Number(process.env.BENCH_FETCH_ROUNDS ?? 5)
const fetchOnlyRun = process.env.BENCH_MICRO_ONLY === 'fetch'

const body = JSON.stringify({ intent: 'execute', service: 'tasks', action: 'echo', payload: TASK })
const headers = { origin: ORIGIN, 'content-type': 'application/json' }

/** `tasks` with `count` actions; `echo` is registered last. */
function servicesWith(count: number) {
  const task = () => Type.Object({ title: Type.String({ minLength: 1 }), count: Type.Integer({ minimum: 0 }) })
  const actions: Action[] = []
  for (let i = 1; i < count; i++) {
    actions.push(createAction({ name: `filler${i}`, description: 'Filler', validation: task(), handler: (data) => Ok(data) }))
  }
  actions.push(createAction({ name: 'echo', description: 'Echo', validation: task(), handler: (data) => Ok({ title: data.title, count: data.count }) }))
  return [{ name: 'tasks', description: 'Benchmark tasks', actions }]
}

async function boot(count: number): Promise<{ server: ServerInstance; ms: number }> {
  const services = servicesWith(count)
  const log = console.log
  console.log = () => {} // createServer prints its URLs
  const started = performance.now()
  try {
    const server = await createServer({
      serverName: 'micro',
      services,
      logServices: false,
      forceNewInstance: true,
      rest: { baseUrl: '/api', allowedOrigins: [ORIGIN], discovery: { enabled: true } },
    })
    await server.rest!.app.ready()
    return { server, ms: performance.now() - started }
  } finally {
    console.log = log
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/** Median over batches of the time per call in µs. */
async function perCall(calls: number, fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(calls, 2_000); i++) await fn() // warm-up
  const batches: number[] = []
  for (let b = 0; b < BATCHES; b++) {
    const started = performance.now()
    for (let i = 0; i < calls; i++) await fn()
    batches.push(((performance.now() - started) * 1000) / calls)
  }
  return median(batches)
}

async function callsPerSecond(windowMs: number, fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now()
  let calls = 0
  while (performance.now() - started < windowMs) {
    await fn()
    calls++
  }
  return (calls * 1000) / (performance.now() - started)
}

const round2 = (value: number) => Math.round(value * 100) / 100

async function main() {
  const expected = JSON.stringify({ status: true, message: "Action 'tasks.echo' executed", data: TASK })

  // app.fetch against app.inject first, in a process that has run nothing else: after the boots of
  // 10,000 actions below, the same loop measured 0.45× on Node 26 against 0.67× here (their
  // megamorphic call sites and larger heap slow both calls, the Response's more).
  const { server } = await boot(1)
  const app = server.rest!.app
  // Each call reads the answer's body: `.body` of the inject response, `text()` of the fetch Response.
  const inject = async () => (await app.inject({ method: 'POST', url: ENDPOINT, headers, payload: body })).body
  const fetch = async () => (await app.fetch(`http://localhost${ENDPOINT}`, { method: 'POST', headers, body })).text()
  // The bare calls, the body left unread.
  const injectOnly = () => app.inject({ method: 'POST', url: ENDPOINT, headers, payload: body })
  const fetchOnly = () => app.fetch(`http://localhost${ENDPOINT}`, { method: 'POST', headers, body })
  // The floor of any standard Response over app.inject: the same inject, then the smallest standard
  // `Response` (bytes and a status, nothing else) and its `text()`. app.fetch cannot go below this
  // while it answers a standard Response.
  const floor = async () => {
    const answer = await app.inject({ method: 'POST', url: ENDPOINT, headers, payload: body })
    return new Response(answer.rawPayload as Uint8Array<ArrayBuffer>, { status: answer.statusCode }).text()
  }
  const viaFetch = await fetch()
  if (viaFetch !== expected) throw new Error(`unexpected answer through app.fetch: ${viaFetch}`)
  if ((await floor()) !== expected) throw new Error('unexpected answer through the floor Response')
  const calls = { inject, fetch, injectOnly, fetchOnly, floor }
  const rates: Record<keyof typeof calls, number[]> = { inject: [], fetch: [], injectOnly: [], fetchOnly: [], floor: [] }
  for (const fn of Object.values(calls)) await callsPerSecond(FETCH_WINDOW_MS / 2, fn)
  for (let round = 0; round < FETCH_ROUNDS; round++) {
    for (const [name, fn] of Object.entries(calls)) rates[name as keyof typeof calls].push(await callsPerSecond(FETCH_WINDOW_MS, fn))
  }
  await server.close()
  const injectPerSec = median(rates.inject)
  const fetchPerSec = median(rates.fetch)
  const injectOnlyPerSec = median(rates.injectOnly)
  const fetchOnlyPerSec = median(rates.fetchOnly)
  const floorPerSec = median(rates.floor)
  const fetchVsInject = {
    injectPerSec: Math.round(injectPerSec),
    fetchPerSec: Math.round(fetchPerSec),
    ratio: round2(fetchPerSec / injectPerSec),
    injectOnlyPerSec: Math.round(injectOnlyPerSec),
    fetchOnlyPerSec: Math.round(fetchOnlyPerSec),
    ratioUnread: round2(fetchOnlyPerSec / injectOnlyPerSec),
    floorPerSec: Math.round(floorPerSec),
    floorRatio: round2(floorPerSec / injectPerSec),
  }
  if (fetchOnlyRun) {
    // Calls per second of every window, in order: window i of each kind ran back to back.
    writeFileSync(process.argv[2], JSON.stringify({ fetchVsInject: { ...fetchVsInject, windows: rates } }, null, 2))
    return
  }

  // Boot: one discarded boot loads the modules, then ROUNDS boots per size.
  await (await boot(1)).server.close()
  const bootMs: Record<number, number[]> = {}
  for (let round = 0; round < ROUNDS; round++) {
    for (const size of SIZES) {
      const { server, ms } = await boot(size)
      ;(bootMs[size] ??= []).push(ms)
      await server.close()
    }
  }

  const dispatch = []
  for (const size of SIZES) {
    const { server } = await boot(size)
    const app = server.rest!.app
    const check = await app.inject({ method: 'POST', url: ENDPOINT, headers, payload: body })
    if (check.body !== expected) throw new Error(`unexpected answer with ${size} actions: ${check.statusCode} ${check.body}`)
    const executeUs = await perCall(EXECUTE_CALLS, () => server.engine.executeAction('tasks', 'echo', TASK, server.context))
    const injectUs = await perCall(INJECT_CALLS, () => app.inject({ method: 'POST', url: ENDPOINT, headers, payload: body }))
    dispatch.push({ actions: size, bootMs: round2(median(bootMs[size])), executeActionUs: round2(executeUs), injectUs: round2(injectUs) })
    await server.close()
  }

  const result = { dispatch, fetchVsInject }
  writeFileSync(process.argv[2], JSON.stringify(result, null, 2))
}

await main()
