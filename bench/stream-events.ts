/**
 * `npm run bench:streams`, the `stream-events` workload: events per second from one streaming action
 * (fastify-actions) against bare Fastify writing the same SSE by hand, each server alone in its own
 * process (core 0 when `taskset` works), read by this process over a real socket. Rounds alternate
 * the servers; the median of each is reported with the ratio (target ≥ 0.8×).
 *
 * Environment: STREAM_EVENTS (events per stream, default 200000), STREAM_ROUNDS (default 5),
 * STREAM_PARALLEL (concurrent streams per round, default 1).
 */
import { request as httpRequest } from 'node:http'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { killAll, SERVER_CORE, spawnNode, stop, waitReady } from './procs.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const events = Number(process.env.STREAM_EVENTS ?? 200_000)
const rounds = Number(process.env.STREAM_ROUNDS ?? 5)
const parallel = Number(process.env.STREAM_PARALLEL ?? 1)
const SERVERS = ['fastify-actions', 'fastify-bare'] as const

/** Reads one stream to its end; counts the message events and checks the done event. */
function readStream(port: number): Promise<number> {
  return new Promise((resolveRead, reject) => {
    const body = JSON.stringify({ n: events })
    const request = httpRequest(
      { host: '127.0.0.1', port, path: '/api/services/feed/events', method: 'POST', agent: false, headers: { accept: 'text/event-stream', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (response) => {
        if (response.statusCode !== 200) return reject(new Error(`HTTP ${response.statusCode}`))
        let count = 0
        let tail = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => {
          const text = tail + chunk
          let at = text.indexOf('event: message\n')
          let last = 0
          while (at !== -1) {
            count++
            last = at + 15
            at = text.indexOf('event: message\n', last)
          }
          tail = text.slice(Math.max(last, text.length - 512))
        })
        response.on('end', () => (tail.includes('event: done') ? resolveRead(count) : reject(new Error('no done event'))))
        response.on('error', reject)
      },
    )
    request.on('error', reject)
    request.end(body)
  })
}

async function measure(name: string): Promise<number> {
  const spawned = spawnNode(['--import', 'tsx', resolve(ROOT, 'bench/servers/stream-events.ts')], { core: SERVER_CORE, env: { STREAM_SERVER: name } })
  try {
    const port = await waitReady(spawned)
    await readStream(port) // warm-up
    const started = process.hrtime.bigint()
    const counts = await Promise.all(Array.from({ length: parallel }, () => readStream(port)))
    const seconds = Number(process.hrtime.bigint() - started) / 1e9
    const total = counts.reduce((sum, count) => sum + count, 0)
    if (total !== events * parallel) throw new Error(`${name}: ${total} events, expected ${events * parallel}`)
    return total / seconds
  } finally {
    await stop(spawned)
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

process.on('exit', killAll)
const samples: Record<string, number[]> = { 'fastify-actions': [], 'fastify-bare': [] }
for (let round = 0; round < rounds; round++) {
  for (const name of round % 2 === 0 ? SERVERS : [...SERVERS].reverse()) samples[name]!.push(await measure(name))
}
const actions = median(samples['fastify-actions']!)
const bare = median(samples['fastify-bare']!)
const format = (value: number) => Math.round(value).toLocaleString('en-US')
process.stdout.write(
  `stream-events: ${events} events per stream, ${parallel} stream(s), ${rounds} rounds (median)\n` +
    `  fastify-actions  ${format(actions)} events/s   [${samples['fastify-actions']!.map(format).join(', ')}]\n` +
    `  fastify-bare     ${format(bare)} events/s   [${samples['fastify-bare']!.map(format).join(', ')}]\n` +
    `  ratio            ${(actions / bare).toFixed(2)}x (target >= 0.80x)\n`,
)
