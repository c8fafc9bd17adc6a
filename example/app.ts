import { randomBytes, randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { createServer, type LogEntry, type RestServerInstance, type ServiceLogger } from '../lib/index.js'
import { buildClientModule } from './client-module.js'
import { exampleSurfaces } from './surfaces.js'
import { openDatabase, setupDatabase, type Database } from './db.js'
import { services } from './services/index.js'

/** The web page and its script (`/assets/*`). */
export const publicDir = fileURLToPath(new URL('./public', import.meta.url))

export interface ExampleSettings {
  PORT?: string
  HOST?: string
  /** A PostgreSQL connection string; PGlite under PGLITE_DIR otherwise. */
  DATABASE_URL?: string
  PGLITE_DIR?: string
  /** Signs the login tokens; a random one per start when unset (tokens then end with the process). */
  JWT_SECRET?: string
  /** Where attachment files are written (`./data/attachments`). */
  ATTACHMENTS_DIR?: string
  /** Other origins allowed to call the API with cookies, comma-separated (`http://localhost:3000`). */
  ALLOWED_ORIGINS?: string
  DIAGNOSTICS?: string
  /** Requests per client per window (`RATE_LIMIT_WINDOW_MS`, 60000): turns rate limiting on; the client key is `x-api-key`, else the client's address. */
  RATE_LIMIT?: string
  RATE_LIMIT_WINDOW_MS?: string
  /** The proxy's addresses or CIDRs, comma-separated (Fastify's `trustProxy`): X-Forwarded-* count only from them. */
  TRUST_PROXY?: string
  /** A Redis URL (`redis://host:6379`): the rate-limit counters live there, shared by every instance using it. */
  REDIS_URL?: string
  /** On SIGTERM, how long `GET /status` answers 503 before the listener closes (0: close at once). */
  SHUTDOWN_DRAIN_MS?: string
  /** The longest an action may run before it answers 504, in ms (10000). */
  ACTION_TIMEOUT_MS?: string
  /** `1`: load shedding (`rest.underPressure`) with its default thresholds. */
  LOAD_SHEDDING?: string
  /** Heap use in MiB above which requests answer 503 (turns load shedding on). */
  MAX_HEAP_USED_MB?: string
  /** `3.2`: the OpenAPI document in version 3.2, its streams' events as `itemSchema` (3.1 by default; docs/openapi.md). */
  OPENAPI_VERSION?: string
  [name: string]: string | undefined
}

export interface Example {
  server: RestServerInstance
  database: Database
  /** `http://<host>:<port>`, once listening. */
  origin: string
  /**
   * Takes this instance out of a load balancer's rotation before it closes: from now on `GET /status`
   * answers 503 (every other request is still served), for `ms` milliseconds.
   */
  drain: (ms: number) => Promise<void>
  close: () => Promise<void>
}

/** The `/status` answer while draining. */
export const drainingMessage = 'fastify-actions example is shutting down'

/** Console logging with a short id per entry: an Err from handleError reads `[<id>] <message>`. */
function consoleLog(write: (...args: unknown[]) => void) {
  return ({ atFunction, message, data }: LogEntry) => {
    const id = randomUUID().slice(0, 8)
    write(`[${id}] ${atFunction}: ${message}`, ...(data === undefined ? [] : [JSON.stringify(data)]))
    return id
  }
}
const logger: ServiceLogger = { info: consoleLog(console.info), warn: consoleLog(console.warn), error: consoleLog(console.error) }

/** An integer setting of at least `min` (1), or undefined when unset; anything else ends the start with a clear message. */
function integerSetting(settings: ExampleSettings, name: string, min = 1): number | undefined {
  const raw = settings[name]
  if (raw === undefined || raw === '') return undefined
  const value = Number(raw)
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < min) throw new Error(`${name} must be an integer of at least ${min}, got ${JSON.stringify(raw)}`)
  return value
}

/**
 * The Redis client for shared rate-limit counters, made to fail fast (docs/rate-limiting.md): while
 * Redis is away requests are served unlimited instead of waiting. One line per outage on stderr.
 */
async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 500 })
  let down = false
  redis.on('error', (error: Error) => {
    if (!down) console.error(`[redis] ${error.message}: rate limits are not enforced until it answers`)
    down = true
  })
  redis.on('ready', () => (down = false))
  try {
    await redis.connect()
  } catch {
    // Logged by the error listener; ioredis keeps reconnecting in the background.
  }
  return redis
}

/**
 * Builds the example server (not listening yet): database, services, auth by cookie, static page,
 * client module. `options.database` is an open database to use instead of the one the settings name
 * (the tests hand in an in-memory PGlite); it is closed with the example.
 */
export async function createExample(settings: ExampleSettings = process.env, options: { database?: Database } = {}): Promise<Omit<Example, 'origin'> & { port: number; host: string; drainMs: number }> {
  const port = Number(settings.PORT ?? 8000)
  const host = settings.HOST ?? '127.0.0.1'
  const rateLimit = integerSetting(settings, 'RATE_LIMIT')
  const windowMs = integerSetting(settings, 'RATE_LIMIT_WINDOW_MS') ?? 60_000
  const maxHeapUsedMb = integerSetting(settings, 'MAX_HEAP_USED_MB')
  const drainMs = integerSetting(settings, 'SHUTDOWN_DRAIN_MS', 0) ?? 0
  const actionTimeout = integerSetting(settings, 'ACTION_TIMEOUT_MS') ?? 10_000
  const database = options.database ?? (await openDatabase(settings))
  console.log(`Database: ${database.description}`)
  if (!settings.JWT_SECRET) console.log('JWT_SECRET is not set: tokens are signed with a random secret and end with this process')
  const clientModule = await buildClientModule()
  const redis = settings.REDIS_URL ? await connectRedis(settings.REDIS_URL) : undefined
  if (redis && rateLimit === undefined) console.log('REDIS_URL is set but RATE_LIMIT is not: nothing is rate limited')

  const server = await createServer({
    serverName: 'fastify-actions example',
    runtime: 'node',
    services,
    diagnostics: settings.DIAGNOSTICS === '1',
    resources: { logger, database: database.db, attachmentsDir: settings.ATTACHMENTS_DIR ?? './data/attachments' },
    // The page signs in with an HttpOnly cookie; account.login also answers the token for API callers.
    auth: { secret: settings.JWT_SECRET || randomBytes(32).toString('base64url'), method: 'cookie' },
    onBoot: { fn: () => setupDatabase(database.db) },
    // A stalled database answers 504 instead of holding the request.
    actionTimeout,
    rest: {
      ...exampleSurfaces,
      // An unknown version is refused at boot (FA_ERR_CONFIG names rest.openapi.version).
      ...(settings.OPENAPI_VERSION ? { openapi: { ...exampleSurfaces.openapi, version: settings.OPENAPI_VERSION as '3.1' | '3.2' } } : {}),
      host,
      port,
      allowedOrigins: (settings.ALLOWED_ORIGINS ?? 'http://localhost:3000').split(',').map((origin) => origin.trim()).filter(Boolean),
      enableStatus: true,
      enableStatic: true,
      staticDir: publicDir,
      discovery: { enabled: true },
      // Forwarded headers count only from the proxy TRUST_PROXY names (docs/security.md).
      ...(settings.TRUST_PROXY ? { fastify: { trustProxy: settings.TRUST_PROXY } } : {}),
      // Per client (x-api-key, else its address: from a trusted proxy, the one it forwarded); in Redis when REDIS_URL is set.
      ...(rateLimit === undefined ? {} : { rateLimiting: { limitingHeader: 'x-api-key', limit: rateLimit, windowMs, ...(redis ? { redis } : {}) } }),
      // 503 with Retry-After while this process is overloaded; GET /status reports it (docs/observability.md).
      ...(maxHeapUsedMb !== undefined ? { underPressure: { maxHeapUsedBytes: maxHeapUsedMb * 1024 * 1024 } } : settings.LOAD_SHEDDING === '1' ? { underPressure: true } : {}),
      uploads: {
        limits: { maxFiles: 5, maxFileSize: 5 * 1024 * 1024, maxTotalSize: 10 * 1024 * 1024 },
        allow: {
          mimeTypes: ['image/png', 'image/jpeg', 'application/pdf', 'text/plain'],
          extensions: ['.png', '.jpg', '.jpeg', '.pdf', '.txt'],
        },
      },
    },
  })
  // The page's `import … from './client.js'`: the client built at start-up, served from memory.
  server.rest!.app.get('/assets/client.js', (_request, reply) => reply.type('text/javascript; charset=utf-8').send(clientModule))
  // Draining: the health check fails first, so the balancer stops sending before the listener
  // closes (an idle keep-alive connection closed under a request the balancer is sending would fail it).
  let draining = false
  server.rest!.app.addHook('onRequest', async (request, reply) => {
    if (draining && request.routeOptions.url === '/status') return reply.code(503).send({ status: false, message: drainingMessage, data: {} })
  })
  return {
    server,
    database,
    port,
    host,
    drainMs,
    drain: async (ms) => {
      draining = true
      if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms))
    },
    close: async () => {
      await server.close()
      await database.close()
      await redis?.quit().catch(() => redis.disconnect())
    },
  }
}
