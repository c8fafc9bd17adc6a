import type { Guard, GuardSelector } from '../guards.js'
import type { FastifyBaseLogger, FastifyInstance, FastifyPluginAsync, FastifyRequest, RegisterOptions } from 'fastify'
import fp from 'fastify-plugin'
import { concern } from '../../plugins/concern.js'
import type { TokenSigner } from '../../plugins/auth.js'
import { corsPlugin } from '../../plugins/cors.js'
import { errorsPlugin } from '../../plugins/errors.js'
import { continueWhenRead } from '../../plugins/expect-continue.js'
import { hostsPlugin } from '../../plugins/hosts.js'
import { MiddlewareRegistry, middlewarePlugin, type Middleware } from '../../plugins/middleware.js'
import { openApiPlugin } from '../../plugins/openapi.js'
import { routerPathOptionsOf } from '../../plugins/paths.js'
import { buildOpenApiDocument } from '../../plugins/openapi-document.js'
import { requestScopePlugin } from '../../plugins/request-scope.js'
import type { PressureProbe } from '../../plugins/under-pressure.js'
import { servicesPlugin } from '../../plugins/services.js'
import { createIdempotencyGuard } from '../../plugins/idempotency.js'
import type { ResolvedRest } from '../../plugins/config.js'
import { clientKeyOf } from '../../plugins/client-key.js'
import { staticPlugin } from '../../plugins/static.js'
import { statusPlugin } from '../../plugins/status.js'
import { setupUploads } from '../../plugins/uploads.js'
import { runOnBoot } from '../boot.js'
import { createContext, getRequestStore, setCurrentContext, type ServerContext } from '../context.js'
import type { RestRequestContext } from '../../plugins/request-scope.js'
import { thrownMessage } from '../db/errors.js'
import { createDiagnostics, type Diagnostics } from '../diagnostics.js'
import { createEngine, type Authenticator, type Engine } from '../engine.js'
import { createOtelInstrument } from '../tracing.js'
import { ErrConfig, ErrNotRegistered, fail } from '../errors.js'
import type { LogEntry, ServiceLogger } from '../logger.js'
import { messages } from '../messages.js'
import { CONFIG_KEYS, resolveConfig, type ResolvedConfig, type ServerConfig } from './config.js'
import { createFetch, type FetchFunction } from './fetch.js'
import { originOf, schemeOf, urlLines } from './urls.js'

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
  /** A guard on the actions `selector` names, on every way in (`ServerInstance.addGuard`). */
  addGuard(selector: GuardSelector, guard: Guard<TDB>): void
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
    thrownMessage: config.exposeErrors ? thrownMessage : hiddenThrownMessage(logger),
    instrument: createOtelInstrument(),
  })
  // Protected actions fail closed: without a REST interface there is no request to read a token from.
  if (config.auth) engine.setAuthenticator(() => fail.auth(messages.authReasons.noRequest))
  else warnUnprotected(config, logger)
  setCurrentContext(context)
  return { config, context, engine, diagnostics }
}

let hiddenIds = 0

/**
 * `exposeErrors: false` (the default in production): a thrown exception answers a generic text with
 * the request id, and its own text goes to the log under that id (always, whatever `diagnostics` is).
 */
function hiddenThrownMessage(logger: ServiceLogger | undefined): (error: unknown) => string {
  const log = createDiagnostics(true, logger)
  return (error) => {
    const request = (getRequestStore()?.rest as RestRequestContext | undefined)?.req
    const id = request ? String(request.id) : `fa-thrown-${(++hiddenIds).toString(36)}`
    const detail = thrownMessage(error)
    request?.log.error({ err: error, reqId: id }, `action threw: ${detail}`)
    log.error('executeAction', `action threw (request id ${id}): ${detail}`, { requestId: id, stack: (error as Error | undefined)?.stack })
    return messages.internalWithId(id)
  }
}

/**
 * `isProtected` only takes effect with `auth` (the specification): without it those actions run for
 * anyone. Said once at boot, whatever `diagnostics` is: through the logger, else the console.
 */
function warnUnprotected(config: ResolvedConfig, logger: ServiceLogger | undefined): void {
  const names = config.services.flatMap((service) => service.actions.filter((action) => action.isProtected).map((action) => `${service.name}.${action.name}`))
  if (names.length > 0) createDiagnostics(true, logger).warn('createServer', messages.protectedWithoutAuth(names.join(', ')))
}

/**
 * Discovery off or behind its secret hides the action list from REST, but MCP's `tools/list` is the
 * same list: turning MCP on would publish it silently. Said once at boot, whatever `diagnostics` is.
 */
function warnMcpListing(rest: NonNullable<ResolvedConfig['rest']>, logger: ServiceLogger | undefined): void {
  if (!rest.mcp || rest.mcp.requireAuth) return
  const discovery = !rest.discovery.enabled ? 'rest.discovery is off' : rest.discovery.secret ? 'rest.discovery needs its secret' : undefined
  if (discovery) createDiagnostics(true, logger).warn('createServer', messages.mcpListsHiddenActions(discovery))
}

/** A part's own `diagnostics` switch when given, else the server's. */
/** The features of the services that change what a browser must be allowed to send and read (CORS). */
function featuresOf(engine: Engine): { streams: boolean; idempotency: boolean } {
  const entries = engine.table.entries
  return { streams: entries.some((entry) => entry.stream), idempotency: entries.some((entry) => entry.action.idempotency !== undefined) }
}

function scoped(core: Core, own: boolean | undefined, logger: ServiceLogger | undefined): Diagnostics {
  return own === undefined || own === core.config.diagnostics ? core.diagnostics : createDiagnostics(own, logger)
}

// Handles by Fastify server (shared by an app and all its encapsulated contexts), then by prefix.
const registrations = new WeakMap<object, Map<string, ActionsHandle<any>>>()

/**
 * Serves the actions on `app`'s context: one named plugin per concern, in this fixed order
 * (docs/architecture.md draws the tree `app.printPlugins()` prints). Each optional concern is
 * registered, and its module imported, only when it is on. Every hook is added to `app` itself: with
 * `createServer` that is the root (so custom routes get them too), with the plugin it is the
 * plugin's own encapsulated context (so the user's other routes do not).
 */
export async function mountActions(app: FastifyInstance, core: Core, ownsApp: boolean): Promise<ActionsHandle<any>> {
  const { config, context, engine } = core
  const rest = config.rest
  if (!rest) throw new ErrConfig('fastify-actions: rest is required to serve actions')
  const logger = loggerFor(config, app)
  const diagnostics = scoped(core, rest.diagnostics, logger)
  const baseUrl = `${app.prefix}${rest.baseUrl}`
  const middleware = new MiddlewareRegistry(routerPathOptionsOf(app))
  let pressure: PressureProbe | undefined
  let auth: { jwt: TokenSigner; authenticate: Authenticator } | undefined

  // `100 Continue` only once a body is read: a declared body over the limit is refused without it.
  continueWhenRead(app.server)
  // Fastify has one 404 handler per prefix: a plugin registered without a prefix leaves the app's to its owner.
  await app.register(errorsPlugin, { baseUrl, diagnostics, notFound: ownsApp || app.prefix !== '' })
  await app.register(requestScopePlugin, { context })
  // Before everything else: a rebound name (DNS rebinding) gets nothing, not even CORS headers.
  await app.register(hostsPlugin, { allowedHosts: rest.allowedHosts })
  if (rest.cors) {
    // Plugin mode in an app that has @fastify/cors above it: that registration's hook already answers
    // for these routes (a second one would fail on its decorator), so its policy is reused, with a warning.
    if (!ownsApp && app.hasRequestDecorator('corsPreflightEnabled')) createDiagnostics(true, logger).warn('fastifyActions', messages.hostCors)
    else await app.register(corsPlugin, { allowedOrigins: rest.allowedOrigins, cors: rest.cors, mcp: rest.mcp !== undefined, ...featuresOf(engine), ownRoutesOnly: !ownsApp })
  }
  // After CORS, so a browser can read the 503; before everything that costs work.
  if (rest.underPressure) await app.register((await import('../../plugins/under-pressure.js')).loadSheddingPlugin, { ...rest.underPressure, expose: (probe) => (pressure = probe) })
  if (rest.rateLimiting) await app.register((await import('../../plugins/rate-limit.js')).rateLimitPlugin, { config: rest.rateLimiting, diagnostics: scoped(core, rest.rateLimiting.diagnostics, logger) })
  if (rest.enableStatic) await app.register(staticPlugin, { dir: rest.staticDir, runtime: config.runtime, diagnostics, followSymlinks: rest.staticFollowSymlinks })
  await app.register(middlewarePlugin, { registry: middleware, context })
  if (config.auth) await app.register((await import('../../plugins/auth.js')).authPlugin, { auth: config.auth, engine, allowedOrigins: rest.allowedOrigins, context, expose: (parts) => (auth = parts) })
  // One guard (and one store) for the endpoint, the per-action routes and MCP: a key means the same everywhere.
  const idempotency = featuresOf(engine).idempotency ? createIdempotencyGuard(rest.idempotency) : undefined
  const uploads = setupUploads({ settings: rest.uploads, multipartLimit: rest.multipartLimit, engine, diagnostics: scoped(core, rest.uploadsDiagnostics, logger) })
  await app.register(servicesPlugin, { compression: rest.compression, engine, context, baseUrl: rest.baseUrl, discovery: rest.discovery, bodyLimit: rest.bodyLimit, maxDepth: rest.maxDepth, multipart: uploads, actionRoutes: rest.actionRoutes, authenticate: auth?.authenticate, streams: rest.streams, clientKey: streamClientKey(rest), idempotency })
  if (rest.openapi) await registerOpenApi(app, rest.openapi, { compression: rest.compression, engine, baseUrl, auth: config.auth, rateLimited: Boolean(rest.rateLimiting), discovery: rest.discovery })
  if (rest.mcp) warnMcpListing(rest, logger)
  if (rest.mcp) await app.register((await loadMcp()).mcpPlugin, { engine, context, bodyLimit: rest.bodyLimit, config: rest.mcp, diagnostics, authenticate: auth?.authenticate, allowedOrigins: rest.allowedOrigins, maxDepth: rest.maxDepth, idempotency, clientKey: streamClientKey(rest) })
  if (rest.enableStatus) await app.register(statusPlugin, { serverName: config.serverName, underPressure: pressure })
  printUrlsOnListen(app, rest, ownsApp)

  return remember(app, {
    prefix: app.prefix,
    engine,
    context,
    config,
    fetch: createFetch(app),
    addMiddleware: (path: string, fn: Middleware) => middleware.add(path, fn),
    addGuard: (selector: GuardSelector, guard: Guard<any>) => engine.addGuard(selector, guard),
    jwt: auth?.jwt,
  })
}

/**
 * Once the app listens, the URLs it really answers on, once (lib/server/urls.ts): on the console
 * with `createServer`, through the host's logger at `info` in plugin mode.
 */
function printUrlsOnListen(app: FastifyInstance, rest: NonNullable<ResolvedConfig['rest']>, ownsApp: boolean): void {
  const prefix = app.prefix
  app.addHook('onListen', function printListening(done) {
    const address = app.server.address()
    if (address && typeof address === 'object') {
      const urls = urlLines(originOf(schemeOf(rest), address, ownsApp ? rest.host : undefined), rest, prefix)
      if (ownsApp) console.log(urls.join('\n'))
      else app.log.info({ urls }, 'fastify-actions routes')
    }
    done()
  })
}

interface OpenApiParts {
  compression: ResolvedRest['compression']
  engine: Engine
  baseUrl: string
  auth: ResolvedConfig['auth']
  rateLimited: boolean
  discovery: NonNullable<ResolvedConfig['rest']>['discovery']
}

/** The OpenAPI document (`fastify-actions-openapi`) and, when on, its reference page (`fastify-actions-reference`). */
async function registerOpenApi(app: FastifyInstance, openapi: NonNullable<NonNullable<ResolvedConfig['rest']>['openapi']>, parts: OpenApiParts): Promise<void> {
  const document = buildOpenApiDocument({ engine: parts.engine, openapi, baseUrl: parts.baseUrl, auth: parts.auth, rateLimited: parts.rateLimited })
  const options = { document, openapi, discovery: parts.discovery, compression: parts.compression }
  await app.register(openApiPlugin, options)
  if (openapi.referencePath) await app.register((await loadReference()).referencePlugin, { ...options, path: openapi.referencePath })
}

/** Files the handle of a registration for `getActions(app, prefix)`. */
function remember(app: FastifyInstance, fields: ActionsHandle<any>): ActionsHandle<any> {
  const handle = Object.freeze(fields)
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

/** The options of the plugin: `createServer`'s config, and a `name` when one app holds several registrations. */
export type FastifyActionsOptions<TDB = unknown> = ServerConfig<TDB> & {
  /**
   * Where the registration's engine and context are decorated: without a name on `app.engine` and
   * `app.serverContext` (one registration per context); with one on `app.actions[name]`.
   */
  name?: string
}

/** The plugin's keys: the configuration's, its `name`, and the options Fastify's `register` takes. */
const PLUGIN_KEYS = Object.freeze({ ...CONFIG_KEYS, name: true, prefix: true, logLevel: true, logSerializers: true } as const)

/** What a named registration decorates `app.actions[name]` with. */
export interface ActionsDecorations<TDB = unknown> {
  readonly engine: Engine
  readonly serverContext: ServerContext<TDB>
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The engine of fastify-actions: on `createServer`'s app (and every plugin registered on it), and
     * where the plugin was registered without a `name`. Fastify's convention types a decorator on every
     * instance (as @fastify/jwt's `jwt`); it is there at run time only in those contexts.
     */
    engine: Engine
    /** The shared context the actions of that registration run with (`ServerContext`). */
    serverContext: ServerContext<any>
    /** The registrations made with a `name`, by name: `app.actions.v1.engine`. */
    actions: Record<string, ActionsDecorations<any>>
  }
}

const NAME = /^[A-Za-z_$][\w$]*$/

// The engines this library decorated an app with: a second unnamed registration finds one of these.
const decoratedEngines = new WeakSet<object>()

/**
 * Decorates `app` with the engine and context of one registration: `app.engine` and
 * `app.serverContext` without a name, `app.actions[name]` with one. A name already taken, or an
 * `engine` / `serverContext` decorator of another plugin, is refused with a configuration error
 * before anything is served. A second registration without a name in the same context leaves
 * `app.engine` to the first (a warning says how to reach it: a `name`, or `getActions(app, prefix)`).
 */
export function decorateActions(app: FastifyInstance, core: Pick<Core, 'engine' | 'context'>, name: string | undefined, warn: (message: string) => void = () => {}): void {
  if (name === undefined) {
    if (!app.hasDecorator('engine') && !app.hasDecorator('serverContext')) {
      app.decorate('engine', core.engine)
      app.decorate('serverContext', core.context)
      decoratedEngines.add(core.engine)
      return
    }
    if (!decoratedEngines.has(app.engine)) {
      throw new ErrConfig('fastify-actions: this app already has an `engine` or `serverContext` decorator from another plugin: register fastify-actions with a `name` (app.actions[name])')
    }
    warn(messages.secondUnnamedRegistration)
    return
  }
  if (typeof name !== 'string' || !NAME.test(name)) throw new ErrConfig(`fastify-actions: name must be an identifier (letters, digits, _ or $), got ${JSON.stringify(name)}`)
  if (!app.hasDecorator('actions')) app.decorate('actions', {} as Record<string, ActionsDecorations<any>>)
  if (Object.hasOwn(app.actions, name)) throw new ErrConfig(`fastify-actions: a registration named '${name}' already exists on this app: names must be unique`)
  app.actions[name] = Object.freeze({ engine: core.engine, serverContext: core.context })
}

/**
 * fastify-actions as a Fastify plugin: `await app.register(fastifyActions, config)`. `config` is
 * `createServer`'s (`rest.host`, `rest.port` and `rest.fastify` do not apply: the app is yours).
 * It honours `prefix`, keeps its hooks and envelopes on its own routes (an encapsulated context of
 * its own), decorates the context it is registered in (`decorateActions`), and rejects `register` /
 * `ready()` with a coded error when `onBoot` fails. Reach it with the decorators or `getActions(app, prefix)`.
 */
export const fastifyActions: FastifyPluginAsync<FastifyActionsOptions<any>> = fp(
  async function fastifyActions(app: FastifyInstance, options: FastifyActionsOptions<any>) {
    const { name, prefix, logLevel, logSerializers } = options as FastifyActionsOptions<any> & RegisterOptions
    const config = bootWait(app, resolveConfig(options, { baseUrl: '', allowedOrigins: [] }, PLUGIN_KEYS), options.onBoot?.maxWaitTime !== undefined)
    const core = buildCore(config, loggerFor(config, app))
    // Said whatever `diagnostics` is (like the unprotected-actions warning): the user must learn where the engine is.
    decorateActions(app, core, name, (message) => createDiagnostics(true, loggerFor(config, app)).warn('fastifyActions', message))
    if (config.onBoot) await runOnBoot(config.onBoot, core.context)
    // Its own encapsulated context: the hooks and envelopes stay on its routes, under the prefix given to register.
    await app.register(concern('routes', async (scope) => void (await mountActions(scope, core, false)), { encapsulate: true }), { prefix, logLevel, logSerializers })
  },
  { name: 'fastify-actions', fastify: '5.x' },
)

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

/** `rest.streams.maxPerClient` counts by the rate limiter's client key: none without rate limiting. */
function streamClientKey(rest: ResolvedRest): ((request: FastifyRequest) => string) | undefined {
  const header = rest.rateLimiting?.limitingHeader
  return header === undefined ? undefined : (request) => clientKeyOf(request, header)
}
