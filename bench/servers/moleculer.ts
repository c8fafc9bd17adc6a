/** moleculer: a local ServiceBroker with a `tasks` service behind moleculer-web (its own cors, body parser and multipart). */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Readable } from 'node:stream'
import moleculer, { type Context, type ServiceSchema } from 'moleculer'
import ApiGateway from 'moleculer-web'
import {
  announce,
  bearerToken,
  checkUpload,
  envelope,
  executed,
  exploreAll,
  hookSteps,
  FASTIFY_CORS_OPTIONS,
  verifyHs256,
  workloadFromEnv,
  type Envelope,
} from '../shared.js'

const workload = workloadFromEnv()
type Task = { title: string; count: number }
type Body = { intent: string; service: string; action: string; payload: Task }
type Meta = { user?: Record<string, unknown>; hookState?: Record<string, unknown>; $statusCode?: number }

const broker = new moleculer.ServiceBroker({ logger: false, transporter: null, metrics: false, tracing: false })

/** fastest-validator, moleculer's built-in: the envelope plus the task, names fixed. */
const taskParams = (action: string) => ({
  intent: { type: 'equal', value: 'execute' },
  service: { type: 'equal', value: 'tasks' },
  action: { type: 'equal', value: action },
  payload: {
    type: 'object',
    props: { title: { type: 'string', min: 1 }, count: { type: 'number', integer: true, min: 0 } },
  },
})
const echo = (action: string) => (ctx: Context<Body>): Envelope => {
  const { title, count } = ctx.params.payload
  return envelope(true, executed('tasks', action), { title, count })
}

const tasks: ServiceSchema = {
  name: 'tasks',
  hooks: {
    // Global before/after ('*') and the action's two before hooks and one after hook.
    before: {
      '*': (ctx: Context<Body>) => {
        if (ctx.params.payload === null || typeof ctx.params.payload !== 'object') throw new moleculer.Errors.MoleculerClientError('payload must be an object', 400)
      },
      hooked: [
        (ctx: Context<Body>) => {
          ctx.params.payload = hookSteps.trimTitle(ctx.params.payload)
        },
        (ctx: Context<Body>) => {
          ctx.params.payload = hookSteps.clampCount(ctx.params.payload)
        },
      ],
    },
    after: {
      hooked: [
        (ctx: Context<Body, Meta>, result: Envelope) => {
          ctx.meta.hookState = { audited: true }
          return result
        },
      ],
      '*': (_ctx: Context, result: Envelope) => result,
    },
  },
  actions: {
    echo: { params: taskParams('echo'), handler: echo('echo') },
    hooked: { params: taskParams('hooked'), handler: echo('hooked') },
    secure: { params: taskParams('secure'), handler: echo('secure') },
    explore: {
      params: { intent: { type: 'equal', value: 'explore' }, service: { type: 'equal', value: '*' }, action: { type: 'equal', value: '*' } },
      handler: () => exploreAll(),
    },
  },
}

const files: ServiceSchema = {
  name: 'files',
  actions: {
    upload: {
      async handler(ctx: Context<Readable, Meta & { filename: string; mimetype: string; $multipart: Record<string, string> }>) {
        // Held in memory whole, as the other servers hold theirs (a Buffer, a File).
        const chunks: Buffer[] = []
        for await (const chunk of ctx.params) chunks.push(chunk as Buffer)
        const size = Buffer.concat(chunks).length
        const { filename, mimetype, $multipart: fields } = ctx.meta
        if (fields.intent !== 'execute' || fields.service !== 'files' || fields.action !== 'upload') {
          ctx.meta.$statusCode = 400
          return envelope(false, 'Bad upload request')
        }
        const problem = checkUpload(filename, size, mimetype)
        if (problem) {
          ctx.meta.$statusCode = 400
          return envelope(false, problem, { error_category: 'validation' })
        }
        return envelope(true, executed('files', 'upload'), { name: filename, size, type: mimetype })
      },
    },
  },
}

const aliasOf: Record<string, string> = {
  'execute-small': 'tasks.echo',
  'execute-hooks': 'tasks.hooked',
  'execute-protected': 'tasks.secure',
  'explore-all': 'tasks.explore',
  'upload-1mb': 'multipart:files.upload',
}

const gateway: ServiceSchema = {
  name: 'api',
  mixins: [ApiGateway],
  settings: {
    ip: '127.0.0.1',
    port: 0,
    log4XXResponses: false,
    routes: [
      {
        path: '/api',
        mappingPolicy: 'restrict',
        authentication: workload === 'execute-protected',
        cors: FASTIFY_CORS_OPTIONS,
        bodyParsers: { json: { strict: false, limit: '1MB' }, urlencoded: false },
        busboyConfig: { limits: { files: 1, fileSize: 10 * 1024 * 1024 } },
        aliases: { 'POST services': aliasOf[workload] },
        onError(_req: IncomingMessage, res: ServerResponse, error: Error & { code?: number }) {
          const status = typeof error.code === 'number' && error.code >= 400 && error.code < 500 ? error.code : 500
          res.statusCode = status
          res.setHeader('content-type', 'application/json; charset=utf-8')
          res.end(JSON.stringify(envelope(false, status === 500 ? 'Internal server error' : error.message)))
        },
      },
    ],
  },
  methods: {
    authenticate(_ctx: Context, _route: unknown, req: IncomingMessage) {
      const token = bearerToken(req.headers.authorization)
      const claims = token ? verifyHs256(token) : null
      if (!claims) throw new ApiGateway.Errors.UnAuthorizedError(ApiGateway.Errors.ERR_INVALID_TOKEN, null)
      return claims
    },
  },
}

broker.createService(tasks)
broker.createService(files)
const api = broker.createService(gateway) as unknown as { server: Server }
await broker.start()
const address = api.server.address()
announce(typeof address === 'object' && address ? address.port : 0)
