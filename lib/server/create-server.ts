import type { Guard, GuardSelector } from '../guards.js'
import type { Socket } from 'node:net'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { clientErrorHandler, frameworkErrors } from '../../plugins/errors.js'
import type { Middleware } from '../../plugins/middleware.js'
import type { ResolvedRest, RestConfig } from '../../plugins/config.js'
import { runOnBoot } from '../boot.js'
import { getCurrentContext, setCurrentContext, type ServerContext } from '../context.js'
import { errorMessage } from '../diagnostics.js'
import type { Engine } from '../engine.js'
import { ErrSingletonMismatch, isActionsError } from '../errors.js'
import { messages } from '../messages.js'
import { resolveConfig, type ResolvedConfig, type ServerConfig } from './config.js'
import { createFetch, type FetchFunction } from './fetch.js'
import { buildCore, decorateActions, loggerFor, mountActions, type Core } from './plugin.js'

/**
 * The Fastify app of a server: a Fastify instance with the web-standard `fetch`, and the server's
 * engine and context decorated (`app.engine`, `app.serverContext`), reachable from any plugin
 * registered on it.
 */
export type ActionsApp<TDB = unknown> = FastifyInstance & { fetch: FetchFunction; engine: Engine; serverContext: ServerContext<TDB> }

/** The REST side of a server. */
export interface RestInterface<TDB = unknown> {
  app: ActionsApp<TDB>
  config: RestConfig
  addMiddleware: (path: string, fn: Middleware) => void
}

export interface ServerInstance<TDB = unknown> {
  config: ServerConfig<TDB>
  engine: Engine
  context: ServerContext<TDB>
  /** Present exactly when `config.rest` was given. */
  rest?: RestInterface<TDB>
  /**
   * Guards the actions `selector` names on every way in (the endpoint, per-action routes, MCP over
   * HTTP and stdio): `Err(text)` refuses with 403 and that text, before hooks and validation
   * (docs/security.md#guards). Path middleware sees only the per-action route.
   */
  addGuard: (selector: GuardSelector, guard: Guard<TDB>) => void
  /** Closes the REST app (in-flight requests finish first). */
  close: () => Promise<void>
}

/** A server built with `rest`: its `rest` is there. */
export type RestServerInstance<TDB = unknown> = ServerInstance<TDB> & { rest: RestInterface<TDB> }

let instance: ServerInstance<any> | undefined
let pending: Promise<ServerInstance<any>> | undefined

/**
 * Builds the server: validates the config, creates the context and the engine, runs `onBoot`,
 * and creates the REST app when `config.rest` is given. The app is not listening yet:
 * call `server.rest.app.listen({ port })`, or use `app.inject` / `app.fetch`.
 */
export function createServer<TDB = unknown>(config: ServerConfig<TDB> & { rest: RestConfig }): Promise<RestServerInstance<TDB>>
export function createServer<TDB = unknown>(config: ServerConfig<TDB>): Promise<ServerInstance<TDB>>
export async function createServer<TDB = unknown>(config: ServerConfig<TDB>): Promise<ServerInstance<TDB>> {
  const resolved = resolveConfig(config)
  if (resolved.forceNewInstance) return build(config, resolved)
  const existing = instance ?? pending
  if (existing) {
    console.warn(messages.singletonReused)
    const server = await existing
    // `server.rest` is typed present when `rest` was given: an earlier server without one cannot stand in.
    if (config.rest && !server.rest) throw new ErrSingletonMismatch()
    return server
  }
  // Two calls racing at start-up share one server.
  pending = build(config, resolved).finally(() => {
    pending = undefined
  })
  return pending
}

/** Fastify with the server-level settings the plugin cannot scope: the user's `rest.fastify` first, the framework's over it. */
function createFastify(rest: ResolvedRest): FastifyInstance {
  const { requestTimeout, bodyLimit, fastify: own } = rest
  const options: Record<string, unknown> = {
    logger: false,
    // While closing, requests already on a connection are served (with Connection: close), not given Fastify's raw 503.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    ...own,
    bodyLimit,
    requestTimeout,
    // Envelopes for a malformed URL and for requests too broken for Fastify to see.
    frameworkErrors,
    clientErrorHandler,
    // Node checks deadlines every 30 s by default (too coarse), and ignores the request deadline
    // while the headers deadline is the longer one: keep headersTimeout <= requestTimeout.
    http: { requestTimeout, headersTimeout: Math.min(60_000, requestTimeout), connectionsCheckingInterval: Math.min(1000, requestTimeout), ...(own.http as object) },
  }
  // `rest.fastify` may carry https/http2 options, which pick other overloads of Fastify(): the app is used through FastifyInstance either way.
  return Fastify(options as FastifyServerOptions) as unknown as FastifyInstance
}

/** How often (ms) closed connections leave the set of tracked sockets, while it holds any. */
const SWEEP_EVERY = 1000

/** The tracked sockets of each app, for tests (test/socket-set.test.ts): how many the set holds. */
const trackedSockets = new WeakMap<FastifyInstance, Set<Socket>>()
export function trackedSocketCount(app: FastifyInstance): number | undefined {
  return trackedSockets.get(app)?.size
}

/**
 * `close()` lets in-flight requests finish, but their keep-alive connections would then hold the
 * server open until keepAliveTimeout: close each one as soon as it falls idle. A connection that
 * never sent a byte (a browser's speculative pre-connection, a pooled socket never used) is not
 * "idle" to Node 20 and would hold `close()` forever: it has no request to finish, so it goes too.
 */
function closeConnectionsWhenDrained(app: FastifyInstance): void {
  const sockets = new Set<Socket>()
  trackedSockets.set(app, sockets)
  // No listener on the socket. With a 'close' listener per connection, a burst of connections tipped
  // V8's allocation-site pretenuring, after which most of what each request allocated was promoted to
  // the old generation. Under 1,000 connections on Node 26 that happened in 5 runs of 7 with a `once`
  // (about 24,000 against 32,000 req/s, 280 MB promoted in 5 s against 12), in 1 of 5 with one shared
  // function, in none of 5 without a listener, and never with --no-allocation-site-pretenuring
  // (docs/benchmarks.md, "1,000 connections"). Closed sockets leave the set instead at the next sweep,
  // once a second while the set holds any (one timer per server, nothing per connection): a closed
  // socket, its buffers and what it references are kept at most that long.
  let sweeper: NodeJS.Timeout | undefined
  const sweep = () => {
    for (const tracked of sockets) if (tracked.destroyed) sockets.delete(tracked)
    if (sockets.size > 0) return
    clearInterval(sweeper)
    sweeper = undefined
  }
  app.server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    if (sweeper !== undefined) return
    sweeper = setInterval(sweep, SWEEP_EVERY)
    sweeper.unref()
  })
  let timer: NodeJS.Timeout | undefined
  const drain = () => {
    app.server.closeIdleConnections?.()
    for (const socket of sockets) if (!socket.destroyed && socket.bytesRead === 0) socket.destroy()
  }
  app.addHook('preClose', function (done) {
    drain()
    timer = setInterval(drain, 25)
    timer.unref()
    done()
  })
  app.addHook('onClose', function (_instance, done) {
    clearInterval(timer)
    clearInterval(sweeper)
    sweeper = undefined
    sockets.clear()
    done()
  })
}

function printServices(config: ResolvedConfig): void {
  if (!config.logServices) return
  console.table(config.services.map((service) => ({ Service: service.name, Description: service.description, Actions: service.actions.length })))
}

/** Awaits `onBoot`; a failure or timeout ends the process with code 1 (the specification). */
async function boot(core: Core): Promise<void> {
  if (!core.config.onBoot) return
  try {
    await runOnBoot(core.config.onBoot, core.context)
  } catch (error) {
    const message = isActionsError(error) ? error.message : errorMessage(error)
    // A boot failure must be seen even with diagnostics off: the process is about to end.
    if (core.diagnostics.enabled) core.diagnostics.error('createServer.onBoot', message)
    else console.error(`[createServer.onBoot] ${message}`)
    process.exit(1)
  }
}

async function build<TDB>(config: ServerConfig<TDB>, resolved: ResolvedConfig): Promise<ServerInstance<TDB>> {
  const started = performance.now()
  const app = resolved.rest ? createFastify(resolved.rest) : undefined
  const core = buildCore(resolved, loggerFor(resolved, app))
  printServices(resolved)
  await boot(core)

  let rest: RestInterface<TDB> | undefined
  if (app && resolved.rest && config.rest) {
    try {
      app.decorate('fetch', createFetch(app))
      decorateActions(app, core, undefined)
      closeConnectionsWhenDrained(app)
      const handle = await mountActions(app, core, true)
      rest = { app: app as ActionsApp<TDB>, config: config.rest, addMiddleware: handle.addMiddleware }
    } catch (error) {
      // A plugin refused its options: close what was built, and leave nothing reachable through getContext().
      await app.close().catch(() => {})
      if (getCurrentContext() === core.context) setCurrentContext(undefined)
      throw error
    }
  }
  // The time to a server ready to listen (onBoot and the REST app's plugins), not onBoot's share alone.
  if (resolved.onBoot) console.log(`Booted in ${Math.round(performance.now() - started)}ms`)

  const server: ServerInstance<TDB> = {
    config,
    engine: core.engine,
    context: core.context,
    rest,
    addGuard: (selector, guard) => core.engine.addGuard(selector, guard),
    async close() {
      if (rest) await rest.app.close()
      if (instance === server) instance = undefined
      if (getCurrentContext() === core.context) setCurrentContext(undefined)
    },
  }
  instance = server
  return server
}
