/** fastify-actions itself: `createServer` with its default plugins, one process per workload. */
import Type from 'typebox'
import { createAction, createServer, Err, Ok, type Action, type ServerConfig, type Service } from '../../lib/index.js'
import { announce, anyWorkloadFromEnv, BIG_UPLOAD, hookSteps, JWT_SECRET, ORIGIN, PAYLOAD_BODY_LIMIT, SERVICE_LISTING, UPLOAD_ALLOW } from '../shared.js'

const workload = anyWorkloadFromEnv()
const payloadWorkload = workload === 'payload-1kb' || workload === 'payload-64kb' || workload === 'payload-1mb'
const Task = Type.Object({ title: Type.String({ minLength: 1 }), count: Type.Integer({ minimum: 0 }) })
type Task = { title: string; count: number }
const hook = (action: string, isCritical: boolean) => ({ service: 'tasks', action, isCritical })

const Items = Type.Object({
  items: Type.Array(Type.Object({ id: Type.Integer({ minimum: 1 }), name: Type.String({ minLength: 1 }), done: Type.Boolean() })),
})

const echo = payloadWorkload
  ? createAction({
      name: 'echo',
      description: 'Echoes a list of items',
      validation: Items,
      handler: (data) => Ok({ items: data.items }),
    })
  : workload === 'execute-output'
    ? createAction({
        name: 'echo',
        description: 'Echoes a task, serialized through its output schema',
        validation: Task,
        output: Task,
        handler: (data) => Ok({ title: data.title, count: data.count }),
      })
    : workload === 'execute-idempotent'
      ? createAction({
          name: 'echo',
          description: 'Echoes a task; every call carries an Idempotency-Key',
          validation: Task,
          idempotency: 'required',
          handler: (data) => Ok({ title: data.title, count: data.count }),
        })
      : createAction({
          name: 'echo',
          description: 'Echoes a task',
          validation: Task,
          handler: (data) => Ok({ title: data.title, count: data.count }),
        })
const hooked = createAction({
  name: 'hooked',
  description: 'Echoes a task through two before hooks and one after hook',
  validation: Task,
  hooks: { before: [hook('trimTitle', true), hook('clampCount', false)], after: [hook('audit', false)] },
  handler: (data) => Ok({ title: data.title, count: data.count }),
})
const secure = createAction({
  name: 'secure',
  description: 'Echoes a task for a verified caller',
  validation: Task,
  isProtected: true,
  handler: (data) => Ok({ title: data.title, count: data.count }),
})
const trimTitle = createAction({
  name: 'trimTitle',
  description: 'Before hook: trims the title',
  handler: (data) => (typeof data.title === 'string' ? Ok(hookSteps.trimTitle(data as Task)) : Err('title must be a string')),
})
const clampCount = createAction({
  name: 'clampCount',
  description: 'Before hook: caps the count',
  handler: (data) => (typeof data.count === 'number' ? Ok(hookSteps.clampCount(data as Task)) : Err('count must be a number')),
})
const audit = createAction({
  name: 'audit',
  description: 'After hook: marks the execution audited',
  handler: (data, context) => {
    context.updateHookState('audited', true)
    return Ok(data)
  },
})
const upload = createAction({
  name: 'upload',
  description: 'Receives one file',
  isSpecial: { contentType: 'multipart/form-data', uploadMode: 'flat' },
  handler: (data) => {
    const file = (data as { files?: Record<string, File | File[]> }).files?.file
    if (!(file instanceof File)) return Err('one file is required')
    return Ok({ name: file.name, size: file.size, type: file.type })
  },
})

const actionsOf: Record<string, Action[]> = {
  tasks: [echo, hooked, secure, trimTitle, clampCount, audit],
  files: [upload],
}
const services: Service[] = SERVICE_LISTING.map(({ name, description, actions }) => ({
  name,
  description,
  actions: actions.map((actionName) => actionsOf[name].find((action) => action.name === actionName) as Action),
}))

const config: ServerConfig = {
  serverName: 'bench',
  services,
  logServices: false,
  forceNewInstance: true,
  rest: {
    baseUrl: '/api',
    host: '127.0.0.1',
    port: 0,
    allowedOrigins: [ORIGIN],
    discovery: { enabled: true },
    uploads: { allow: UPLOAD_ALLOW },
  },
}
// bench/compression.ts: the same server with response compression off (its A/B).
if (process.env.BENCH_COMPRESSION === 'off') config.rest!.compression = false
if (payloadWorkload) config.rest!.bodyLimit = PAYLOAD_BODY_LIMIT
if (workload === 'upload-10mb') config.rest!.uploads = { allow: UPLOAD_ALLOW, limits: { maxFileSize: BIG_UPLOAD.maxFileSize } }
if (workload === 'execute-protected') config.auth = { secret: JWT_SECRET }
if (workload === 'mcp-call') config.rest!.mcp = { enabled: true }
if (workload === 'execute-hooks') {
  config.onBeforeActionHandler = ({ payload }) => (payload !== null && typeof payload === 'object' ? Ok(null) : Err('payload must be an object'))
  config.onAfterActionHandler = ({ result }) => result
}

// createServer prints the service URL on stdout; the harness reads only the READY line.
const server = await createServer(config)
const app = server.rest!.app
await app.listen({ host: '127.0.0.1', port: 0 })
const address = app.server.address()
announce(typeof address === 'object' && address ? address.port : 0)
