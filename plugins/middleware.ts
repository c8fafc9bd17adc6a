import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { compilePathMatcher, type Middleware, type MiddlewareContext } from '../lib/middleware.js'
import { runInRequestScope } from '../lib/context.js'
import { requestStoreOf } from './request-scope.js'

interface RegisteredMiddleware {
  matches: (path: string) => boolean
  fn: Middleware
}

/** The `addMiddleware` list; the plugin reads it per request, so entries added after boot apply. */
export class MiddlewareRegistry {
  readonly entries: RegisteredMiddleware[] = []

  add(path: string, fn: Middleware): void {
    if (typeof fn !== 'function') throw new TypeError('addMiddleware: the middleware must be a function')
    this.entries.push({ matches: compilePathMatcher(path), fn })
  }
}

function makeResponse(body: string, status: number, type: string, headers?: Record<string, string>): Response {
  return new Response(body, { status, headers: { 'content-type': type, ...headers } })
}

function createMiddlewareContext(req: FastifyRequest, reply: FastifyReply): MiddlewareContext {
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
 * Runs the registered middleware, in order, as one callback-style root `onRequest` hook.
 * The innermost `next()` releases the request to Fastify and resolves when the response is sent.
 */
export const middlewarePlugin = fp<{ registry: MiddlewareRegistry }>(
  async function middleware(app, { registry }) {
    app.addHook('onRequest', (request, reply, done) => {
      const { entries } = registry
      if (entries.length === 0) return done()
      const path = request.path
      const chain = entries.filter((entry) => entry.matches(path))
      if (chain.length === 0) return done()

      let released = false
      // Resolved when the response is out ('close' also covers a client that went away).
      const sent = new Promise<void>((resolve) => {
        reply.raw.once('finish', resolve).once('close', resolve)
      })
      const c = createMiddlewareContext(request, reply)
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
      runInRequestScope(requestStoreOf(request, reply), () => dispatch(0)).then(
        () => {
          if (!released && !reply.sent) done(new Error('A middleware neither called next() nor returned a Response'))
        },
        (error: Error) => {
          if (!released && !reply.sent) done(error)
          else request.log.error(error, 'middleware failed after next()')
        },
      )
    })
  },
  { name: 'fastify-actions-middleware', fastify: '5.x' },
)
