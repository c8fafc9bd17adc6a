/** fastify-bare: one Fastify 5 route with a JSON-schema body and @fastify/cors: the ceiling for fastify-actions. */
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify'
import cors from '@fastify/cors'
import fastifyJwt from '@fastify/jwt'
import multipart from '@fastify/multipart'
import {
  announce,
  checkUpload,
  ENDPOINT,
  envelope,
  executed,
  exploreAll,
  hookSteps,
  JWT_SECRET,
  ORIGIN,
  UPLOAD,
  workloadFromEnv,
  type Envelope,
} from '../shared.js'

const workload = workloadFromEnv()
type Task = { title: string; count: number }
type Body = { intent: string; service: string; action: string; payload: Task }

const app = Fastify({ logger: false })
await app.register(cors, {
  origin: [ORIGIN],
  credentials: true,
  exposedHeaders: ['Content-Length'],
  allowedHeaders: ['Content-Type', 'Authorization'],
  methods: ['POST', 'GET', 'OPTIONS'],
  maxAge: 600,
})
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
  case 'upload-1mb':
    await app.register(multipart, { limits: { fileSize: 10 * 1024 * 1024, files: 10 } })
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
