/**
 * `npx tsx bench/compression-micro.ts`: the CPU one small execute answer costs with response
 * compression on and off, in one process through `inject` (no sockets, so a machine shared with other
 * work disturbs it less than a load run): batches alternate between the two servers, medians reported,
 * for a browser's `Accept-Encoding: gzip, deflate, br` and for a client that sends none.
 * Environment: BENCH_BATCH (2000 requests), BENCH_BATCHES (15, after two for warm-up).
 */
import Type from 'typebox'
import { createAction, createServer, Ok, type Service } from '../lib/index.js'

const echo = createAction({
  name: 'echo',
  description: 'Echoes a task',
  validation: Type.Object({ title: Type.String({ minLength: 1 }), count: Type.Integer({ minimum: 0 }) }),
  handler: (data) => Ok({ title: data.title, count: data.count }),
})
const echoService: Service = { name: 'tasks', description: 'Tasks', actions: [echo] }

const BATCH = Number(process.env.BENCH_BATCH ?? 2000)
const BATCHES = Number(process.env.BENCH_BATCHES ?? 15)
const payload = JSON.stringify({ intent: 'execute', service: 'tasks', action: 'echo', payload: { title: 'buy milk', count: 2 } })
const accepting = { 'content-type': 'application/json', 'accept-encoding': 'gzip, deflate, br' }
const plain = { 'content-type': 'application/json' }

const build = (compression: boolean) =>
  createServer({ serverName: 'bench', services: [echoService], logServices: false, forceNewInstance: true, rest: { baseUrl: '/api', allowedOrigins: [], compression } })
const servers = { on: await build(true), off: await build(false) }
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!

for (const [label, headers] of [['Accept-Encoding: gzip, deflate, br', accepting], ['no Accept-Encoding', plain]] as const) {
  const samples: Record<'on' | 'off', number[]> = { on: [], off: [] }
  for (let batch = 0; batch < BATCHES + 2; batch++) {
    for (const variant of batch % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
      const app = servers[variant].rest!.app
      const before = process.cpuUsage()
      for (let i = 0; i < BATCH; i++) {
        const answer = await app.inject({ method: 'POST', url: '/api/services', payload, headers })
        if (answer.statusCode !== 200 || answer.headers['content-encoding'] !== undefined) throw new Error(`${variant}: ${answer.statusCode}`)
      }
      const used = process.cpuUsage(before)
      // The first two rounds warm the JIT: not counted.
      if (batch >= 2) samples[variant].push((used.user + used.system) / BATCH)
    }
  }
  const on = median(samples.on)
  const off = median(samples.off)
  console.log(`${label}: small execute answer through inject, ${BATCHES} batches of ${BATCH}: off ${off.toFixed(1)} µs CPU, on ${on.toFixed(1)} µs CPU (${(((on - off) / off) * 100).toFixed(1)} %)`)
}
for (const server of Object.values(servers)) await server.close()
