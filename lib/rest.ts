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
import { rateLimitPlugin } from '../plugins/rate-limit.js'
import { authPlugin } from '../plugins/auth.js'
import { corsPlugin, isCorsEnabled } from '../plugins/cors.js'
import { staticPlugin } from '../plugins/static.js'
import { setupUploads } from '../plugins/uploads.js'

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
export const DEFAULT_REQUEST_TIMEOUT = 30_000

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

/**
 * `close()` lets in-flight requests finish, but their keep-alive connections would then hold the
 * server open until keepAliveTimeout: close each one as soon as it falls idle.
 */
function closeConnectionsWhenDrained(app: FastifyInstance): void {
  let timer: NodeJS.Timeout | undefined
  app.addHook('preClose', function (done) {
    timer = setInterval(() => app.server.closeIdleConnections(), 25)
    timer.unref()
    done()
  })
  app.addHook('onClose', function (_instance, done) {
    clearInterval(timer)
    done()
  })
}

/** Builds the Fastify app and registers the built-in plugins in their fixed order. */
export async function createRestApp({ engine, context, config, rest, diagnostics }: RestAppOptions): Promise<RestInterface> {
  const baseUrl = normalizeBaseUrl(rest.baseUrl)
  const bodyLimit = rest.bodyLimit ?? DEFAULT_BODY_LIMIT
  const requestTimeout = rest.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT
  const app: FastifyInstance = Fastify({
    logger: false,
    bodyLimit,
    frameworkErrors,
    clientErrorHandler,
    // While closing, requests already on a connection are served (with Connection: close), not given Fastify's raw 503.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // Node checks deadlines every 30 s by default (too coarse), and ignores the request deadline
    // while the headers deadline is the longer one: keep headersTimeout <= requestTimeout.
    requestTimeout,
    http: {
      requestTimeout,
      headersTimeout: Math.min(60_000, requestTimeout),
      connectionsCheckingInterval: Math.min(1000, requestTimeout),
    },
  })
  app.decorate('engine', engine)
  app.decorate('serverContext', context)
  app.decorate('fetch', createFetch(app))

  installErrorEnvelope(app, { baseUrl, diagnostics })
  closeConnectionsWhenDrained(app)
  const middleware = new MiddlewareRegistry()

  try {
    // The fixed order of DESIGN.md; each slot is one encapsulated plugin.
    await app.register(requestScopePlugin)
    if (isCorsEnabled(rest.cors)) await app.register(corsPlugin, { allowedOrigins: rest.allowedOrigins, cors: rest.cors }) // 1. cors
    if (rest.rateLimiting?.limitingHeader) {
      await app.register(rateLimitPlugin, { config: rest.rateLimiting, diagnostics, logger: config.resources?.logger }) // 2. rate-limit
    }
    if (rest.enableStatic === true) {
      await app.register(staticPlugin, { dir: rest.staticDir, runtime: config.runtime, diagnostics }) // 3. static
    }
    await app.register(middlewarePlugin, { registry: middleware }) // 4. middleware
    if (config.auth) await app.register(authPlugin, { auth: config.auth, engine, allowedOrigins: rest.allowedOrigins }) // 5. auth
    // 6. uploads (scoped to the services endpoint through its `multipart` option) and 7. services
    await app.register(servicesPlugin, {
      engine,
      context,
      baseUrl,
      discovery: rest.discovery,
      bodyLimit,
      multipart: setupUploads({ config: rest.uploads, diagnostics, logger: config.resources?.logger }),
    })
    // 8. MCP, loaded only when enabled: the SDK costs nothing otherwise.
    if (rest.mcp?.enabled === true) {
      const { mcpPlugin } = await import('../plugins/mcp.js')
      await app.register(mcpPlugin, { engine, context, baseUrl, bodyLimit, config: rest.mcp, diagnostics })
    }
    if (rest.enableStatus === true) await app.register(statusPlugin, { serverName: config.serverName })
  } catch (error) {
    // A plugin refused its options: close what was built, then let createServer throw.
    await app.close().catch(() => {})
    throw error
  }

  return {
    app,
    config: rest,
    addMiddleware: (path, fn) => middleware.add(path, fn),
  }
}
