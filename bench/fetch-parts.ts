/**
 * Where `app.fetch`'s time goes against its floor (issue 45): one server, one process, the same
 * `execute` call made five ways in interleaved windows, CPU µs per call (`process.cpuUsage`):
 *
 *   floor            app.inject, then `new Response(bytes, { status })` and its `text()`
 *   floor+headers    the floor, then every header of the answer copied into the Response's `Headers`
 *   floor+all        the floor+headers, with app.fetch's byte stream and statusText: what
 *                    lib/server/fetch.ts's toResponse builds, over inject options written out
 *   app.fetch        the real call: reading the WHATWG arguments, inject, toResponse, `text()`
 *
 * The steps between two rows are what each part of a standard Response costs. Usage:
 * `npx tsx bench/fetch-parts.ts` (BENCH_FETCH_PARTS_ROUNDS windows of BENCH_FETCH_PARTS_MS each,
 * default 9 × 1,500 ms); prints a table and, with argv[2], writes the JSON there.
 */
import { writeFileSync } from 'node:fs'
import Type from 'typebox'
import { createAction, createServer, Ok } from '../lib/index.js'
import { ENDPOINT, ORIGIN, TASK } from './shared.js'

const ROUNDS = Number(process.env.BENCH_FETCH_PARTS_ROUNDS ?? 9)
const WINDOW_MS = Number(process.env.BENCH_FETCH_PARTS_MS ?? 1_500)

const body = JSON.stringify({ intent: 'execute', service: 'tasks', action: 'echo', payload: TASK })
const headers = { origin: ORIGIN, 'content-type': 'application/json' }
const task = Type.Object({ title: Type.String({ minLength: 1 }), count: Type.Integer({ minimum: 0 }) })
const echo = createAction({ name: 'echo', description: 'Echo', validation: task, handler: (data) => Ok({ title: data.title, count: data.count }) })

const log = console.log
console.log = () => {} // createServer prints its URLs
const server = await createServer({
  serverName: 'fetch-parts',
  services: [{ name: 'tasks', description: 'Benchmark tasks', actions: [echo] }],
  logServices: false,
  rest: { baseUrl: '/api', allowedOrigins: [ORIGIN], discovery: { enabled: true } },
})
console.log = log
const app = server.rest!.app
await app.ready()

type Injected = Awaited<ReturnType<typeof app.inject>>
const inject = () => app.inject({ method: 'POST', url: ENDPOINT, headers, payload: body })
const copyHeaders = (target: Headers, answer: Injected) => {
  for (const name in answer.headers) {
    const value = answer.headers[name]
    if (value === undefined) continue
    if (Array.isArray(value)) for (const item of value) target.append(name, item)
    else target.set(name, String(value))
  }
}
const byteStream = (raw: Buffer) =>
  new ReadableStream<Uint8Array>({
    type: 'bytes',
    start(controller) {
      if (raw.byteLength > 0) controller.enqueue(new Uint8Array(raw))
      controller.close()
    },
  })

const calls: Record<string, () => Promise<string>> = {
  floor: async () => {
    const answer = await inject()
    return new Response(answer.rawPayload as Uint8Array<ArrayBuffer>, { status: answer.statusCode }).text()
  },
  'floor+headers': async () => {
    const answer = await inject()
    const response = new Response(answer.rawPayload as Uint8Array<ArrayBuffer>, { status: answer.statusCode })
    copyHeaders(response.headers, answer)
    return response.text()
  },
  'floor+all': async () => {
    const answer = await inject()
    const response = new Response(byteStream(answer.rawPayload), { status: answer.statusCode, statusText: answer.statusMessage })
    copyHeaders(response.headers, answer)
    return response.text()
  },
  'app.fetch': async () => (await app.fetch(`http://localhost${ENDPOINT}`, { method: 'POST', headers, body })).text(),
}

const expected = await calls.floor!()
for (const [name, call] of Object.entries(calls)) if ((await call()) !== expected) throw new Error(`${name}: a different answer`)
const headerCount = Object.keys((await inject()).headers).length

async function cpuPerCall(call: () => Promise<string>, ms: number): Promise<number> {
  const started = performance.now()
  const cpu = process.cpuUsage()
  let n = 0
  while (performance.now() - started < ms) {
    await call()
    n++
  }
  const used = process.cpuUsage(cpu)
  return (used.user + used.system) / n
}

const perRound: Record<string, number[]> = Object.fromEntries(Object.keys(calls).map((name) => [name, []]))
for (const call of Object.values(calls)) await cpuPerCall(call, WINDOW_MS / 2) // warm-up
for (let round = 0; round < ROUNDS; round++) {
  // The order rotates every round, so no call always runs after the same one.
  const names = Object.keys(calls)
  const order = [...names.slice(round % names.length), ...names.slice(0, round % names.length)]
  for (const name of order) perRound[name]!.push(await cpuPerCall(calls[name]!, WINDOW_MS))
}
await server.close()

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}
const floor = median(perRound.floor!)
const rows = Object.entries(perRound).map(([name, values]) => ({ name, cpuMicros: Math.round(median(values) * 100) / 100, vsFloor: Math.round((floor / median(values)) * 1000) / 1000 }))
console.log(`Node ${process.version}, ${ROUNDS} rounds × ${WINDOW_MS} ms, the answer has ${headerCount} headers`)
for (const row of rows) console.log(`${row.name.padEnd(14)} ${row.cpuMicros.toFixed(2).padStart(8)} µs CPU per call   calls/s vs floor ${row.vsFloor.toFixed(3)}×`)
if (process.argv[2]) writeFileSync(process.argv[2], `${JSON.stringify({ node: process.version, rounds: ROUNDS, windowMs: WINDOW_MS, headerCount, rows, perRound }, null, 2)}\n`)
