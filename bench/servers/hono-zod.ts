/** hono-zod: Hono 4 on @hono/node-server 2.x, zod validation, hono/cors. */
import { serve } from '@hono/node-server'
import { zValidator } from '@hono/zod-validator'
import { Hono, type Context, type MiddlewareHandler } from 'hono'
import { cors } from 'hono/cors'
import { HTTPException } from 'hono/http-exception'
import { jwt } from 'hono/jwt'
import { z } from 'zod'
import {
  announce,
  checkUpload,
  ENDPOINT,
  envelope,
  executed,
  exploreAll,
  hookSteps,
  JSON_TYPE,
  JWT_SECRET,
  ORIGIN,
  UPLOAD,
  workloadFromEnv,
  type Envelope,
} from '../shared.js'

const workload = workloadFromEnv()
type Task = { title: string; count: number }
type Env = { Variables: { task: Task; hookState: Record<string, unknown> } }

const app = new Hono<Env>()
app.use(
  '*',
  cors({
    origin: [ORIGIN],
    credentials: true,
    exposeHeaders: ['Content-Length'],
    allowHeaders: ['Content-Type', 'Authorization'],
    allowMethods: ['POST', 'GET', 'OPTIONS'],
    maxAge: 600,
  }),
)
app.onError((error, c) => {
  if (error instanceof HTTPException) return send(c, envelope(false, error.message), error.status === 401 ? 401 : 400)
  return send(c, envelope(false, 'Internal server error'), 500)
})

/** c.json says `application/json`; every server here answers with the charset, as Fastify does. */
function send(c: Context, body: Envelope, status: 200 | 400 | 401 | 500 = 200) {
  return c.body(JSON.stringify(body), status, { 'content-type': JSON_TYPE })
}

const task = z.object({ title: z.string().min(1), count: z.number().int().min(0) })
const bodyOf = <P extends z.ZodType>(intent: string, service: string, action: string, payload: P) =>
  zValidator(
    'json',
    z.object({ intent: z.literal(intent), service: z.literal(service), action: z.literal(action), payload }),
    (result, c) => {
      if (!result.success) return send(c, envelope(false, 'Validation failed', { errors: result.error.issues.map((i) => i.message) }), 400)
    },
  )

switch (workload) {
  case 'execute-small':
    app.post(ENDPOINT, bodyOf('execute', 'tasks', 'echo', task), (c) => {
      const { title, count } = c.req.valid('json').payload
      return send(c, envelope(true, executed('tasks', 'echo'), { title, count }))
    })
    break
  case 'execute-hooks': {
    // Global before/after as app middleware around next(); the action's hooks as route middleware.
    const globalHooks: MiddlewareHandler<Env> = async (c, next) => {
      await next()
      if (c.res.status >= 500) c.res = send(c, envelope(false, 'Internal server error'), 500)
    }
    const step = (fn: (task: Task) => Task): MiddlewareHandler<Env> => async (c, next) => {
      c.set('task', fn(c.get('task')))
      await next()
    }
    const audit: MiddlewareHandler<Env> = async (c, next) => {
      await next()
      c.set('hookState', { audited: true })
    }
    app.use(ENDPOINT, globalHooks)
    app.post(
      ENDPOINT,
      bodyOf('execute', 'tasks', 'hooked', task),
      async (c, next) => {
        const { payload } = c.req.valid('json')
        if (payload === null || typeof payload !== 'object') return send(c, envelope(false, 'payload must be an object'), 400)
        c.set('task', payload)
        await next()
      },
      step(hookSteps.trimTitle),
      step(hookSteps.clampCount),
      audit,
      (c) => {
        const { title, count } = c.get('task')
        return send(c, envelope(true, executed('tasks', 'hooked'), { title, count }))
      },
    )
    break
  }
  case 'execute-protected':
    app.post(
      ENDPOINT,
      jwt({ secret: JWT_SECRET, alg: 'HS256' }),
      bodyOf('execute', 'tasks', 'secure', task),
      (c) => {
        const { title, count } = c.req.valid('json').payload
        return send(c, envelope(true, executed('tasks', 'secure'), { title, count }))
      },
    )
    break
  case 'explore-all':
    app.post(ENDPOINT, bodyOf('explore', '*', '*', z.object({})), (c) => send(c, exploreAll()))
    break
  case 'upload-1mb':
    app.post(ENDPOINT, async (c) => {
      const form = await c.req.parseBody()
      const file = form[UPLOAD.field]
      if (form.intent !== 'execute' || form.service !== 'files' || form.action !== 'upload' || !(file instanceof File)) {
        return send(c, envelope(false, 'Bad upload request'), 400)
      }
      const problem = checkUpload(file.name, file.size, file.type)
      if (problem) return send(c, envelope(false, problem, { error_category: 'validation' }), 400)
      return send(c, envelope(true, executed('files', 'upload'), { name: file.name, size: file.size, type: file.type }))
    })
    break
}

const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => announce(info.port))
server.on('error', (error) => {
  console.error(error)
  process.exit(1)
})
