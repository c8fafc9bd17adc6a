/**
 * One point of the boot curve, in a fresh process: `node boot.js <server> <actions>`.
 *
 * - `fastify-actions`: `createServer` with one service of `<actions>` actions, each with its own
 *   TypeBox schema of the execute-small task (as bench/micro.ts), then `app.ready()`.
 * - `fastify-bare`: Fastify 5 with @fastify/cors (the options of bench/servers/fastify-bare.ts) and
 *   `<actions>` POST routes, each with its own JSON-schema body (the envelope around the same task),
 *   then `app.ready()`: the closest "same work" for bare Fastify.
 *
 * Each side imports only its own modules (bare Fastify never loads fastify-actions, so the RSS compares
 * like with like). The clock starts after the modules are loaded, before the actions or routes are defined. Prints one
 * JSON line: { bootMs, processMs (since the process started, modules included), rssMiB and heapUsedMiB
 * after ready }.
 */
import type { Action } from '../lib/index.js'
import { FASTIFY_CORS_OPTIONS, ORIGIN } from './shared.js'

export interface BootSample {
  bootMs: number
  processMs: number
  rssMiB: number
  heapUsedMiB: number
}

const [server, countArg] = process.argv.slice(2)
const count = Number(countArg)
if ((server !== 'fastify-actions' && server !== 'fastify-bare') || !Number.isInteger(count) || count < 1) {
  throw new Error('usage: boot.js <fastify-actions|fastify-bare> <actions ≥ 1>')
}

/** When the clock started: after the side's modules are loaded. */
let started = 0

async function bootActions(): Promise<() => Promise<void>> {
  const [{ default: Type }, { createAction, createServer, Ok }] = await Promise.all([import('typebox'), import('../lib/index.js')])
  started = performance.now()
  const actions: Action[] = []
  for (let i = 1; i <= count; i++) {
    const validation = Type.Object({ title: Type.String({ minLength: 1 }), count: Type.Integer({ minimum: 0 }) })
    actions.push(createAction({ name: `action${i}`, description: 'Echo', validation, handler: (data) => Ok({ title: data.title, count: data.count }) }))
  }
  const log = console.log
  console.log = () => {} // createServer prints its URLs
  try {
    const instance = await createServer({
      serverName: 'boot',
      services: [{ name: 'tasks', description: 'Benchmark tasks', actions }],
      logServices: false,
      forceNewInstance: true,
      rest: { baseUrl: '/api', allowedOrigins: [ORIGIN], discovery: { enabled: true } },
    })
    await instance.rest!.app.ready()
    return () => instance.close()
  } finally {
    console.log = log
  }
}

async function bootBare(): Promise<() => Promise<void>> {
  const [{ default: Fastify }, { default: cors }] = await Promise.all([import('fastify'), import('@fastify/cors')])
  started = performance.now()
  const app = Fastify({ logger: false })
  await app.register(cors, FASTIFY_CORS_OPTIONS)
  for (let i = 1; i <= count; i++) {
    const body = {
      type: 'object',
      required: ['intent', 'service', 'action', 'payload'],
      properties: {
        intent: { const: 'execute' },
        service: { const: 'tasks' },
        action: { const: `action${i}` },
        payload: {
          type: 'object',
          required: ['title', 'count'],
          properties: { title: { type: 'string', minLength: 1 }, count: { type: 'integer', minimum: 0 } },
        },
      },
    }
    app.post(`/api/tasks/action${i}`, { schema: { body } }, (request) => {
      const { payload } = request.body as { payload: { title: string; count: number } }
      return { status: true, message: `Action 'tasks.action${i}' executed`, data: { title: payload.title, count: payload.count } }
    })
  }
  await app.ready()
  return () => app.close()
}

const boot = server === 'fastify-actions' ? bootActions : bootBare
const close = await boot()
const ready = performance.now()
const memory = process.memoryUsage()
const sample: BootSample = {
  bootMs: Math.round((ready - started) * 10) / 10,
  processMs: Math.round(ready),
  rssMiB: Math.round((memory.rss / 1024 / 1024) * 10) / 10,
  heapUsedMiB: Math.round((memory.heapUsed / 1024 / 1024) * 10) / 10,
}
await close()
process.stdout.write(`${JSON.stringify(sample)}\n`)
