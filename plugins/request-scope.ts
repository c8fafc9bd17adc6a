import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify'
import { createRequestStore, runInRequestScope, type RequestStore } from '../lib/context.js'
import { pathOf } from '../lib/middleware.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The request store of fastify-actions (sessions, auth, `rest`); opened on first use. */
    actionsStore: RequestStore | null
    /** A request header by case-insensitive name (Hono's `c.req.header`). */
    header(name: string): string | undefined
    /** The path of the URL, without the query string. */
    readonly path: string
  }
}

/** The request's store, made once and reused by middleware and the handler. */
export function requestStoreOf(request: FastifyRequest, reply: FastifyReply): RequestStore {
  return (request.actionsStore ??= createRequestStore({ req: request, reply }))
}

/**
 * Every route handler, built-in or added later on `server.rest.app`, runs inside its request's scope.
 * AsyncLocalStorage does not survive Fastify's body parsing, so the scope is opened around the handler.
 */
export const requestScopePlugin = fp(
  async function requestScope(app) {
    app.decorateRequest('actionsStore', null)
    app.decorateRequest('header', function (this: FastifyRequest, name: string) {
      const value = this.headers[name.toLowerCase()]
      return Array.isArray(value) ? value.join(', ') : value
    })
    app.decorateRequest('path', {
      getter(this: FastifyRequest) {
        return pathOf(this.url)
      },
    })
    app.addHook('onRoute', (route) => {
      const handler = route.handler as RouteHandlerMethod
      route.handler = function scoped(this: unknown, request, reply) {
        return runInRequestScope(requestStoreOf(request, reply), () => handler.call(this as never, request, reply))
      }
    })
  },
  { name: 'fastify-actions-request-scope', fastify: '5.x' },
)
