import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler, RouteHandlerMethod } from 'fastify'
import { createRequestStore, inRequestScope, outsideRequestScope, runInRequestScope, type RequestStore, type ServerContext } from '../lib/context.js'
import { abortReason, abortReasons } from '../lib/cancellation.js'
import { routedPath, routerPathOptionsOf } from './paths.js'
import { concern } from './concern.js'

/** The `rest` value of a request store: the request being served. */
export interface RestRequestContext {
  req: FastifyRequest
  reply: FastifyReply
}

/**
 * A request served by fastify-actions, with Hono-style conveniences. Typed here, not by augmenting
 * Fastify: the conveniences exist only on the routes fastify-actions serves (and, with
 * `createServer`, on every route of its app).
 */
export type ActionsRequest = FastifyRequest & {
  /** A request header by case-insensitive name (Hono's `c.req.header`). */
  header(name: string): string | undefined
  /** The path the router routes on: `%XX` decoded, without the query string or fragment (plugins/paths.ts). */
  readonly path: string
}

type ScopedRequest = FastifyRequest & { actionsStore: RequestStore | null }

/** The `rest` value with the request's AbortController, once `signal()` made it. */
type SignalledRest = RestRequestContext & { controller?: AbortController }

/**
 * The request's signal (`RequestStore.signal`), made on the first call: it aborts when the client
 * disconnects before the answer was written. One function for every store (no closure per request).
 */
function requestSignal(this: RequestStore): AbortSignal | undefined {
  const rest = this.rest as SignalledRest | undefined
  if (!rest) return undefined
  if (rest.controller) return rest.controller.signal
  const controller = (rest.controller = new AbortController())
  const response = rest.reply.raw
  if (response.destroyed && !response.writableFinished) controller.abort(abortReason(abortReasons.disconnected))
  else response.once('close', () => {
    if (!response.writableFinished) controller.abort(abortReason(abortReasons.disconnected))
  })
  return controller.signal
}

/** The request's store, made once and reused by middleware and the handler. */
export function requestStoreOf(request: FastifyRequest, reply: FastifyReply, context: ServerContext<any>): RequestStore {
  const scoped = request as ScopedRequest
  if (scoped.actionsStore) return scoped.actionsStore
  return (scoped.actionsStore = createRequestStore({ req: request, reply } satisfies RestRequestContext, context, requestSignal))
}

/**
 * Every route handler of `app`'s context, built-in or added later, runs inside its request's scope.
 * AsyncLocalStorage does not survive Fastify's body parsing, so the scope is opened around the handler.
 */
export function setupRequestScope(app: FastifyInstance, context: ServerContext<any>): void {
  // A second registration inside an app that already has them (createServer + the plugin) reuses them.
  if (!app.hasRequestDecorator('actionsStore')) app.decorateRequest('actionsStore', null)
  if (!app.hasRequestDecorator('header')) {
    app.decorateRequest('header', function (this: FastifyRequest, name: string) {
      const value = this.headers[name.toLowerCase()]
      return Array.isArray(value) ? value.join(', ') : value
    })
  }
  if (!app.hasRequestDecorator('path')) {
    const router = routerPathOptionsOf(app)
    app.decorateRequest('path', {
      getter(this: FastifyRequest) {
        return routedPath(this.url, router)
      },
    })
  }
  app.addHook('onRoute', (route) => {
    const handler = route.handler as RouteHandlerMethod
    // A handler that hands its request to the engine itself (the endpoint's, `scopesItsExecution`): no
    // scope is entered around it, and with no write inside a scope it needs no hook to move one out (a
    // route without onSend hooks skips Fastify's onSend step altogether: the endpoint's hot path).
    if ((handler as { [OWN_SCOPE]?: true })[OWN_SCOPE]) return
    route.handler = function scoped(this: unknown, request, reply) {
      return runInRequestScope(requestStoreOf(request, reply, context), () => handler.call(this as never, request, reply))
    }
    // Last of the route's onSend hooks: Fastify writes the answer right after it.
    const onSend = route.onSend
    route.onSend = onSend === undefined ? [writeOutsideScope] : [...(Array.isArray(onSend) ? onSend : [onSend]), writeOutsideScope]
  })
}

const OWN_SCOPE = Symbol('fastify-actions.scopesItsExecution')

/**
 * Marks a route handler that runs no code of the application outside the engine and answers by
 * returning (the answer, or a promise of it; anything it sends itself goes through
 * `outsideRequestScope`): it passes the request's store to `engine.execute` (`{ request }`), whose
 * execution scope carries it. Its route gets no request scope around the handler and no
 * `writeOutsideScope` hook (test/retention.test.ts checks each such route).
 */
export function scopesItsExecution<T extends RouteHandlerMethod>(handler: T): T {
  ;(handler as T & { [OWN_SCOPE]?: true })[OWN_SCOPE] = true
  return handler
}

/**
 * A handler that sends synchronously (`reply.send()` before it returns, as custom routes and the MCP
 * route's own refusals do) has Fastify write the answer inside the request scope, and every async
 * resource made while writing carries the scope: the timer Node arms when it formats the `Date` header
 * (its once-a-second cache), the write, the keep-alive timer. They would keep the request and its body
 * alive after the answer on an open connection; the answer is written outside the scope instead. An
 * answer the handler returns is written outside it already (Fastify sends it from a promise callback).
 */
const writeOutsideScope: onSendHookHandler = function writeOutsideScope(_request, _reply, payload, done) {
  if (!inRequestScope()) return done(null, payload)
  outsideRequestScope(() => done(null, payload))
}

/** The request scope as the plugin `fastify-actions-request-scope`. */
export const requestScopePlugin = concern('request-scope', async (app, { context }: { context: ServerContext<any> }) => setupRequestScope(app, context))
