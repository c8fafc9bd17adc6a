/** fastify-bare: one Fastify 5 route with a JSON-schema body and @fastify/cors: the ceiling for fastify-actions. */
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify'
import cors from '@fastify/cors'
import fastifyJwt from '@fastify/jwt'
import multipart from '@fastify/multipart'
import compress from '@fastify/compress'
import {
  announce,
  anyWorkloadFromEnv,
  BIG_UPLOAD,
  checkUpload,
  ENDPOINT,
  envelope,
  executed,
  exploreAll,
  hookSteps,
  JWT_SECRET,
  FASTIFY_CORS_OPTIONS,
  PAYLOAD_BODY_LIMIT,
  UPLOAD,
  type Envelope,
} from '../shared.js'

const workload = anyWorkloadFromEnv()
type Task = { title: string; count: number }
type Body = { intent: string; service: string; action: string; payload: Task }

// The payload curve's 1 MiB payload needs more than Fastify's default 1 MiB: both servers get 4 MiB there.
const payloadWorkload = workload === 'payload-1kb' || workload === 'payload-64kb' || workload === 'payload-1mb'
const app = Fastify({ logger: false, ...(payloadWorkload ? { bodyLimit: PAYLOAD_BODY_LIMIT } : {}) })
await app.register(cors, FASTIFY_CORS_OPTIONS)
app.setErrorHandler((error: { statusCode?: number; message: string }, _request, reply) => {
  const status = error.statusCode && error.statusCode >= 400 ? error.statusCode : 500
  return reply.code(status).send(envelope(false, status === 500 ? 'Internal server error' : error.message))
})

const bodyOf = (intent: string, service: string, action: string, payload: object) => ({
  type: 'object',
  required: ['intent', 'service', 'action', 'payload'],
  properties: { intent: { const: intent }, service: { const: service }, action: { const: action }, payload },
})
const task = {
  type: 'object',
  required: ['title', 'count'],
  properties: { title: { type: 'string', minLength: 1 }, count: { type: 'integer', minimum: 0 } },
}
const echoReply = {
  200: {
    type: 'object',
    properties: {
      status: { type: 'boolean' },
      message: { type: 'string' },
      data: { type: 'object', properties: { title: { type: 'string' }, count: { type: 'integer' } } },
    },
  },
}
const echo = (action: string) => (request: FastifyRequest): Envelope => {
  const { title, count } = (request.body as Body).payload
  return envelope(true, executed('tasks', action), { title, count })
}

switch (workload) {
  case 'execute-compress':
    // @fastify/compress with its defaults, as fastify-actions' `rest.compression` (on by default).
    await app.register(compress)
    app.post(ENDPOINT, { schema: { body: bodyOf('execute', 'tasks', 'echo', task), response: echoReply } }, echo('echo'))
    break
  case 'execute-small':
  case 'execute-output':
    // The same response schema as the fastify-actions `output` of execute-output.
    app.post(ENDPOINT, { schema: { body: bodyOf('execute', 'tasks', 'echo', task), response: echoReply } }, echo('echo'))
    break
  case 'execute-hooks': {
    // Global before/after as root hooks; the action's two before hooks and one after hook on the route.
    app.addHook('preHandler', async (request) => {
      const { payload } = request.body as Body
      if (payload === null || typeof payload !== 'object') throw Object.assign(new Error('payload must be an object'), { statusCode: 400 })
    })
    app.addHook('preSerialization', async (_request, _reply, body: unknown) => body)
    const step = (fn: (task: Task) => Task) => async (request: FastifyRequest) => {
      const body = request.body as Body
      body.payload = fn(body.payload)
    }
    const audit = async (request: FastifyRequest, _reply: FastifyReply, body: unknown) => {
      ;(request as FastifyRequest & { hookState?: Record<string, unknown> }).hookState = { audited: true }
      return body
    }
    app.post(
      ENDPOINT,
      {
        schema: { body: bodyOf('execute', 'tasks', 'hooked', task), response: echoReply },
        preHandler: [step(hookSteps.trimTitle), step(hookSteps.clampCount)],
        preSerialization: audit,
      },
      echo('hooked'),
    )
    break
  }
  case 'execute-protected':
    await app.register(fastifyJwt, { secret: JWT_SECRET, verify: { algorithms: ['HS256'] } })
    app.post(
      ENDPOINT,
      {
        schema: { body: bodyOf('execute', 'tasks', 'secure', task), response: echoReply },
        onRequest: async (request) => {
          await request.jwtVerify()
        },
      },
      echo('secure'),
    )
    break
  case 'explore-all':
    app.post(ENDPOINT, { schema: { body: bodyOf('explore', '*', '*', { type: 'object' }) } }, async () => exploreAll())
    break
  case 'payload-1kb':
  case 'payload-64kb':
  case 'payload-1mb': {
    // The same body schema as the fastify-actions action; no response schema on either (both JSON.stringify).
    const items = {
      type: 'object',
      required: ['items'],
      properties: {
        items: {
          type: 'array',
          items: {
            type: 'object',
            required: ['id', 'name', 'done'],
            properties: { id: { type: 'integer', minimum: 1 }, name: { type: 'string', minLength: 1 }, done: { type: 'boolean' } },
          },
        },
      },
    }
    app.post(ENDPOINT, { schema: { body: bodyOf('execute', 'tasks', 'echo', items) } }, (request) => {
      const { payload } = request.body as { payload: { items: unknown[] } }
      return envelope(true, executed('tasks', 'echo'), { items: payload.items })
    })
    break
  }
  case 'upload-1mb':
  case 'upload-10mb':
    await app.register(multipart, { limits: { fileSize: workload === 'upload-10mb' ? BIG_UPLOAD.maxFileSize : 10 * 1024 * 1024, files: 10 } })
    app.post(ENDPOINT, async (request, reply) => {
      const fields: Record<string, string> = {}
      let file: { name: string; size: number; type: string } | undefined
      for await (const part of request.parts()) {
        if (part.type === 'field') fields[part.fieldname] = String(part.value)
        else if (part.fieldname === UPLOAD.field) {
          const bytes = await part.toBuffer()
          file = { name: part.filename, size: bytes.length, type: part.mimetype }
        } else await part.toBuffer()
      }
      if (fields.intent !== 'execute' || fields.service !== 'files' || fields.action !== 'upload' || !file) {
        return reply.code(400).send(envelope(false, 'Bad upload request'))
      }
      const problem = checkUpload(file.name, file.size, file.type)
      if (problem) return reply.code(400).send(envelope(false, problem, { error_category: 'validation' }))
      return envelope(true, executed('files', 'upload'), file)
    })
    break
}

await app.listen({ host: '127.0.0.1', port: 0 })
const address = app.server.address()
announce(typeof address === 'object' && address ? address.port : 0)
