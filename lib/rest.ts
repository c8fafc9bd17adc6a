import Fastify, { type FastifyInstance } from 'fastify'
import type { Engine } from './engine.js'
import type { ServerContext } from './context.js'
import type { Diagnostics } from './diagnostics.js'
import type { RestConfig, RestInterface, ServerConfig } from './types.js'
import { createFetch, type FetchFunction } from './fetch.js'
import { MiddlewareRegistry, middlewarePlugin } from '../plugins/middleware.js'
import { requestScopePlugin } from '../plugins/request-scope.js'
import { clientErrorHandler, frameworkErrors, installErrorEnvelope } from '../plugins/errors.js'
import { servicesPlugin } from '../plugins/services.js'
import { statusPlugin } from '../plugins/status.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The engine of the server this app serves. */
    engine: Engine
    /** The shared context. */
    serverContext: ServerContext<any>
    /** WHATWG fetch over `inject`: a Request in, a Response out. */
    fetch: FetchFunction
  }
}

export const DEFAULT_BODY_LIMIT = 1024 * 1024

export interface RestAppOptions {
  engine: Engine
  context: ServerContext<any>
  config: ServerConfig<any>
  rest: RestConfig
  diagnostics: Diagnostics
}

/** Normalises the base URL: a leading slash, no trailing slash, `''` for the root. */
export function normalizeBaseUrl(baseUrl: string | undefined): string {
  const trimmed = (baseUrl ?? '').trim().replace(/\/+$/, '')
  if (trimmed === '') return ''
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`
}

/** Builds the Fastify app and registers the built-in plugins in their fixed order. */
export async function createRestApp({ engine, context, config, rest, diagnostics }: RestAppOptions): Promise<RestInterface> {
  const baseUrl = normalizeBaseUrl(rest.baseUrl)
  const bodyLimit = rest.bodyLimit ?? DEFAULT_BODY_LIMIT
  const app: FastifyInstance = Fastify({
    logger: false,
    bodyLimit,
    frameworkErrors,
    clientErrorHandler,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  })
  app.decorate('engine', engine)
  app.decorate('serverContext', context)
  app.decorate('fetch', createFetch(app))

  installErrorEnvelope(app, { baseUrl, diagnostics })
  const middleware = new MiddlewareRegistry()

  // The fixed order of DESIGN.md; each slot is one encapsulated plugin.
  await app.register(requestScopePlugin)
  // 1. cors
  // 2. rate-limit
  // 3. static
  await app.register(middlewarePlugin, { registry: middleware }) // 4. middleware
  // 5. auth
  // 6. uploads (scoped to the services endpoint through its `multipart` option) and 7. services
  await app.register(servicesPlugin, {
    engine,
    context,
    baseUrl,
    discovery: rest.discovery,
    bodyLimit,
  })
  if (rest.enableStatus === true) await app.register(statusPlugin, { serverName: config.serverName })

  return {
    app,
    config: rest,
    addMiddleware: (path, fn) => middleware.add(path, fn),
  }
}
