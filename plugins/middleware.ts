import type { FastifyInstance, FastifyReply } from 'fastify'
import { runInRequestScope, type ServerContext } from '../lib/context.js'
import { compilePathMatcher, type RouterPathOptions } from './paths.js'
import { requestStoreOf, type ActionsRequest } from './request-scope.js'
import { concern } from './concern.js'

/** What a middleware receives, in the manner of Hono's `c`. */
export interface MiddlewareContext {
  /** The Fastify request, with `header(name)` and `path` conveniences. */
  req: ActionsRequest
  reply: FastifyReply
  /** A JSON `Response`; return it to answer and stop the request. */
  json: (body: unknown, status?: number, headers?: Record<string, string>) => Response
  /** A plain-text `Response`. */
  text: (body: string, status?: number, headers?: Record<string, string>) => Response
}

/**
 * Runs before the services endpoint. Return a `Response` to stop the request;
 * `await next()` continues and resolves once the response has been sent.
 */
export type Middleware = (c: MiddlewareContext, next: () => Promise<void>) => void | Response | Promise<void | Response>

interface RegisteredMiddleware {
  matches: (path: string) => boolean
  fn: Middleware
}

/** The `addMiddleware` list; the hook reads it per request, so entries added after boot apply. */
export class MiddlewareRegistry {
  readonly entries: RegisteredMiddleware[] = []

  /** `router`: the app's router options, so a path matches as the router routes it. */
  constructor(private readonly router?: RouterPathOptions) {}

  add(path: string, fn: Middleware): void {
    if (typeof fn !== 'function') throw new TypeError('addMiddleware: the middleware must be a function')
    this.entries.push({ matches: compilePathMatcher(path, this.router), fn })
  }
}

function makeResponse(body: string, status: number, type: string, headers?: Record<string, string>): Response {
  return new Response(body, { status, headers: { 'content-type': type, ...headers } })
}

function createMiddlewareContext(req: ActionsRequest, reply: FastifyReply): MiddlewareContext {
  return {
    req,
    reply,
    json: (body, status = 200, headers) => makeResponse(JSON.stringify(body), status, 'application/json; charset=utf-8', headers),
    text: (body, status = 200, headers) => makeResponse(body, status, 'text/plain; charset=utf-8', headers),
  }
}

/** Writes a WHATWG Response through Fastify's reply. */
export async function sendResponse(reply: FastifyReply, response: Response): Promise<void> {
  reply.code(response.status)
  for (const [name, value] of response.headers) if (name !== 'set-cookie') reply.header(name, value)
  const cookies = response.headers.getSetCookie()
  if (cookies.length > 0) reply.header('set-cookie', cookies)
  const body = response.body ? Buffer.from(await response.arrayBuffer()) : ''
  await reply.send(body)
}

/**
 * Runs the registered middleware, in order, as one callback-style `onRequest` hook on `app`.
 * The innermost `next()` releases the request to Fastify and resolves when the response is sent.
 */
export function setupMiddleware(app: FastifyInstance, registry: MiddlewareRegistry, context: ServerContext<any>): void {
  app.addHook('onRequest', (request, reply, done) => {
    const { entries } = registry
    if (entries.length === 0) return done()
    const req = request as ActionsRequest
    // The path the router routes on (decoded, cut at `?` and `#`), never the raw target: plugins/paths.ts.
    const path = req.path
    const chain = entries.filter((entry) => entry.matches(path))
    if (chain.length === 0) return done()

    let released = false
    // Resolved when the response is out ('close' also covers a client that went away).
    const sent = new Promise<void>((resolve) => {
      reply.raw.once('finish', resolve).once('close', resolve)
    })
    const c = createMiddlewareContext(req, reply)
    const dispatch = async (index: number): Promise<void> => {
      if (index === chain.length) {
        if (!released) {
          released = true
          done()
        }
        return sent
      }
      let called = false
      const answer = await chain[index].fn(c, () => {
        if (called) return Promise.reject(new Error('next() called more than once'))
        called = true
        return dispatch(index + 1)
      })
      if (answer instanceof Response && !released && !reply.sent) await sendResponse(reply, answer)
    }
    runInRequestScope(requestStoreOf(request, reply, context), () => dispatch(0)).then(
      () => {
        if (!released && !reply.sent) done(new Error('A middleware neither called next() nor returned a Response'))
      },
      (error: Error) => {
        if (!released && !reply.sent) done(error)
        else request.log.error(error, 'middleware failed after next()')
      },
    )
  })
}

/** The `addMiddleware` registry, run as one hook, as the plugin `fastify-actions-middleware`. */
export const middlewarePlugin = concern('middleware', async (app, { registry, context }: { registry: MiddlewareRegistry; context: ServerContext<any> }) =>
  setupMiddleware(app, registry, context),
)
