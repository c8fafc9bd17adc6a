import type { FastifyBaseLogger, FastifyInstance, FastifyPluginAsync } from 'fastify'
import type { TokenSigner } from '../../plugins/auth.js'
import { setupCors } from '../../plugins/cors.js'
import { installErrorEnvelope } from '../../plugins/errors.js'
import { MiddlewareRegistry, setupMiddleware, type Middleware } from '../../plugins/middleware.js'
import { openApiPlugin } from '../../plugins/openapi.js'
import { buildOpenApiDocument } from '../../plugins/openapi-document.js'
import { setupRequestScope } from '../../plugins/request-scope.js'
import { servicesPlugin } from '../../plugins/services.js'
import { staticPlugin } from '../../plugins/static.js'
import { statusPlugin } from '../../plugins/status.js'
import { setupUploads } from '../../plugins/uploads.js'
import { runOnBoot } from '../boot.js'
import { createContext, setCurrentContext, type ServerContext } from '../context.js'
import { thrownMessage } from '../db/errors.js'
import { createDiagnostics, type Diagnostics } from '../diagnostics.js'
import { createEngine, type Engine } from '../engine.js'
import { createOtelInstrument } from '../tracing.js'
import { ErrConfig, ErrNotRegistered, fail } from '../errors.js'
import type { LogEntry, ServiceLogger } from '../logger.js'
import { messages } from '../messages.js'
import { resolveConfig, type ResolvedConfig, type ServerConfig } from './config.js'
import { createFetch, type FetchFunction } from './fetch.js'

/** The engine and context of one server or plugin registration, and the diagnostics they write through. */
export interface Core {
  config: ResolvedConfig
  context: ServerContext<any>
  engine: Engine
  diagnostics: Diagnostics
}

/** One registration of fastify-actions on a Fastify app, as `getActions(app, prefix)` returns it. */
export interface ActionsHandle<TDB = unknown> {
  /** The `prefix` it was registered under (`''` for none). */
  readonly prefix: string
  readonly engine: Engine
  readonly context: ServerContext<TDB>
  /** The configuration, resolved: every default applied. */
  readonly config: ResolvedConfig
  /** WHATWG fetch over `app.inject`: a Request in, a Response out, no socket. */
  readonly fetch: FetchFunction
  /** Middleware for this registration's routes, run before the services endpoint. */
  addMiddleware(path: string, fn: Middleware): void
  /** The registration's JWT signer and verifier; present only when `auth` is configured. */
  readonly jwt?: TokenSigner
}

/** True when Fastify was created with a logger (`logger: false` gives a no-op one without a level). */
function hasLogger(log: FastifyBaseLogger): boolean {
  const level = (log as { level?: unknown }).level
  return typeof level === 'string' && level !== 'silent'
}

let logIds = 0

/** Fastify's logger as a ServiceLogger, so diagnostics go there when `resources.logger` is not set. */
function fastifyServiceLogger(log: FastifyBaseLogger): ServiceLogger {
  const write = (level: 'info' | 'warn' | 'error') => ({ atFunction, message, data }: LogEntry) => {
    const id = `fa-${(++logIds).toString(36)}`
    log[level]({ logId: id, atFunction, data }, message)
    return id
  }
  return { info: write('info'), warn: write('warn'), error: write('error') }
}

/** `resources.logger`, else Fastify's logger when it has one, else none (diagnostics then use the console). */
export function loggerFor(config: ResolvedConfig, app: FastifyInstance | undefined): ServiceLogger | undefined {
  return config.resources.logger ?? (app && hasLogger(app.log) ? fastifyServiceLogger(app.log) : undefined)
}

/** Context and engine of one server. From now on `getContext()` returns this context outside requests. */
export function buildCore(config: ResolvedConfig, logger: ServiceLogger | undefined): Core {
  const context = createContext({ resources: config.resources })
  const diagnostics = createDiagnostics(config.diagnostics, logger)
  const engine = createEngine({
    services: config.services,
    diagnostics,
    onBeforeActionHandler: config.onBeforeActionHandler,
    onAfterActionHandler: config.onAfterActionHandler,
    actionTimeout: config.actionTimeout,
    thrownMessage,
    instrument: createOtelInstrument(),
  })
  // Protected actions fail closed: without a REST interface there is no request to read a token from.
  if (config.auth) engine.setAuthenticator(() => fail.auth(messages.authReasons.noRequest))
  else warnUnprotected(config, logger)
  setCurrentContext(context)
  return { config, context, engine, diagnostics }
}

/**
 * `isProtected` only takes effect with `auth` (the specification): without it those actions run for
 * anyone. Said once at boot, whatever `diagnostics` is: through the logger, else the console.
 */
function warnUnprotected(config: ResolvedConfig, logger: ServiceLogger | undefined): void {
  const names = config.services.flatMap((service) => service.actions.filter((action) => action.isProtected).map((action) => `${service.name}.${action.name}`))
  if (names.length > 0) createDiagnostics(true, logger).warn('createServer', messages.protectedWithoutAuth(names.join(', ')))
}

/** A part's own `diagnostics` switch when given, else the server's. */
function scoped(core: Core, own: boolean | undefined, logger: ServiceLogger | undefined): Diagnostics {
  return own === undefined || own === core.config.diagnostics ? core.diagnostics : createDiagnostics(own, logger)
}

// Handles by Fastify server (shared by an app and all its encapsulated contexts), then by prefix.
const registrations = new WeakMap<object, Map<string, ActionsHandle<any>>>()

/**
 * Serves the actions on `app`'s context, in the fixed order: error and 404 envelopes, request
 * scope, CORS, load shedding, rate limit, static files, middleware, auth, uploads + services, status. Every hook is
 * added to `app` itself: with `createServer` that is the root (so custom routes get them too), with
 * the plugin it is the plugin's own encapsulated context (so the user's other routes do not).
 */
export async function mountActions(app: FastifyInstance, core: Core, ownsApp: boolean): Promise<ActionsHandle<any>> {
  const { config, context, engine } = core
  const rest = config.rest
  if (!rest) throw new ErrConfig('fastify-actions: rest is required to serve actions')
  const logger = loggerFor(config, app)
  const diagnostics = scoped(core, rest.diagnostics, logger)

  // Fastify has one 404 handler per prefix: a plugin registered without a prefix leaves the app's to its owner.
  const notFound = ownsApp || app.prefix !== ''
  installErrorEnvelope(app, { baseUrl: `${app.prefix}${rest.baseUrl}`, diagnostics, notFound })
  setupRequestScope(app, context)
  if (rest.cors) await setupCors(app, { allowedOrigins: rest.allowedOrigins, cors: rest.cors })
  // After CORS, so a browser can read the 503; before everything that costs work.
  // Each optional part is imported only when it is on: a feature left off loads none of its packages.
  const underPressure = rest.underPressure ? await (await import('../../plugins/under-pressure.js')).setupUnderPressure(app, rest.underPressure) : undefined
  if (rest.rateLimiting) {
    const { setupRateLimit } = await import('../../plugins/rate-limit.js')
    await setupRateLimit(app, { config: rest.rateLimiting, diagnostics: scoped(core, rest.rateLimiting.diagnostics, logger) })
  }
  if (rest.enableStatic) await app.register(staticPlugin, { dir: rest.staticDir, runtime: config.runtime, diagnostics, followSymlinks: rest.staticFollowSymlinks })
  const middleware = new MiddlewareRegistry()
  setupMiddleware(app, middleware, context)
  const auth = config.auth ? await (await import('../../plugins/auth.js')).setupAuth(app, { auth: config.auth, engine, allowedOrigins: rest.allowedOrigins }) : undefined
  const uploads = setupUploads({ settings: rest.uploads, multipartLimit: rest.multipartLimit, engine, diagnostics: scoped(core, rest.uploadsDiagnostics, logger) })
  await app.register(servicesPlugin, { engine, context, baseUrl: rest.baseUrl, discovery: rest.discovery, bodyLimit: rest.bodyLimit, maxDepth: rest.maxDepth, multipart: uploads, actionRoutes: rest.actionRoutes })
  if (rest.openapi) {
    const document = buildOpenApiDocument({ engine, openapi: rest.openapi, baseUrl: `${app.prefix}${rest.baseUrl}`, auth: config.auth, rateLimited: Boolean(rest.rateLimiting) })
    const options = { document, openapi: rest.openapi, discovery: rest.discovery }
    await app.register(openApiPlugin, options)
    if (rest.openapi.referencePath) {
      const { referencePlugin } = await loadReference()
      await app.register(referencePlugin, { ...options, path: rest.openapi.referencePath })
    }
  }
  if (rest.mcp) {
    const { mcpPlugin } = await loadMcp()
    await app.register(mcpPlugin, { engine, context, bodyLimit: rest.bodyLimit, config: rest.mcp, diagnostics, authenticate: auth?.authenticate })
  }
  if (rest.enableStatus) await app.register(statusPlugin, { serverName: config.serverName, underPressure })

  const handle: ActionsHandle<any> = Object.freeze({
    prefix: app.prefix,
    engine,
    context,
    config,
    fetch: createFetch(app),
    addMiddleware: (path: string, fn: Middleware) => middleware.add(path, fn),
    jwt: auth?.jwt,
  })
  let byPrefix = registrations.get(app.server)
  if (!byPrefix) registrations.set(app.server, (byPrefix = new Map()))
  byPrefix.set(app.prefix, handle)
  return handle
}

/**
 * An adapter whose package is an optional peer dependency, imported only when its feature is on;
 * a missing package is a configuration error that says what to install.
 */
async function loadOptional<T>(load: () => Promise<T>, option: string, peer: string, otherwise = ''): Promise<T> {
  try {
    return await load()
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error
    throw new ErrConfig(`fastify-actions: ${option} needs the optional peer dependency ${peer} (npm install ${peer})${otherwise}: ${(error as Error).message}`)
  }
}

const loadMcp = () => loadOptional(() => import('../../plugins/mcp.js'), 'rest.mcp.enabled', '@modelcontextprotocol/sdk')
const loadReference = () =>
  loadOptional(() => import('../../plugins/openapi-reference.js'), 'rest.openapi.reference', '@scalar/fastify-api-reference', ', or set rest.openapi.reference: false')

/**
 * The plugin's onBoot runs inside Fastify's `pluginTimeout`, which would cut it with an unrelated
 * error. Unless `maxWaitTime` was set, the deadline is the default or just under `pluginTimeout`,
 * whichever is shorter; a `maxWaitTime` set beyond it is refused at once.
 */
function bootWait(app: FastifyInstance, config: ResolvedConfig, explicit: boolean): ResolvedConfig {
  const pluginTimeout = Number(app.initialConfig.pluginTimeout ?? 10_000)
  if (!config.onBoot || pluginTimeout === 0) return config
  const room = pluginTimeout - 100
  if (config.onBoot.maxWaitTime <= room) return config
  if (explicit) {
    throw new ErrConfig(
      `fastify-actions: onBoot.maxWaitTime (${config.onBoot.maxWaitTime} ms) must be shorter than Fastify's pluginTimeout (${pluginTimeout} ms): pass a larger pluginTimeout to Fastify()`,
    )
  }
  return Object.freeze({ ...config, onBoot: Object.freeze({ ...config.onBoot, maxWaitTime: Math.max(1, room) }) })
}

/**
 * fastify-actions as a Fastify plugin: `await app.register(fastifyActions, config)`. `config` is
 * `createServer`'s (`rest.host`, `rest.port` and `rest.fastify` do not apply: the app is yours).
 * It honours `prefix`, keeps its hooks and envelopes on its own routes, and rejects `register` /
 * `ready()` with a coded error when `onBoot` fails. Reach it with `getActions(app, prefix)`.
 */
export const fastifyActions: FastifyPluginAsync<ServerConfig<any>> = async function fastifyActions(app, options) {
  const config = bootWait(app, resolveConfig(options, { baseUrl: '', allowedOrigins: [] }), options.onBoot?.maxWaitTime !== undefined)
  const core = buildCore(config, loggerFor(config, app))
  if (config.onBoot) await runOnBoot(config.onBoot, core.context)
  await mountActions(app, core, false)
}

/**
 * The registration of fastify-actions under `prefix` on this app (`''` when registered without one,
 * and for `createServer`). Throws `FA_ERR_NOT_REGISTERED` when there is none yet: call it after
 * `await app.register(...)`.
 */
export function getActions<TDB = unknown>(app: FastifyInstance, prefix = ''): ActionsHandle<TDB> {
  const handle = registrations.get(app.server)?.get(prefix)
  if (!handle) throw new ErrNotRegistered(prefix)
  return handle
}
