import type { AfterActionHandler, BeforeActionHandler, Service } from './action.js'
import type { Resources, ServerContext } from './context.js'
import type { KeyTable } from './config-keys.js'
import { ErrConfig, ErrEmptyServices } from './errors.js'
import type { Result } from './result.js'

const MB = 1024 * 1024

/**
 * Every default of the framework, in one table (docs/server.md shows the same table, and a test
 * holds them together). Nothing else in lib/ or plugins/ applies a default of its own.
 */
export const DEFAULTS = Object.freeze({
  runtime: 'bun',
  diagnostics: false,
  logServices: true,
  forceNewInstance: false,
  onBootMaxWaitTime: 10_000,
  /** `exposeErrors` defaults to false when `NODE_ENV` is this, true otherwise. */
  hideErrorsIn: 'production',
  rest: Object.freeze({
    baseUrl: '',
    host: 'localhost',
    port: 8000,
    bodyLimit: 1 * MB,
    requestTimeout: 30_000,
    enableStatus: false,
    enableStatic: false,
    staticDir: './assets',
    discoveryEnabled: false,
    corsEnabled: true,
    mcpEnabled: false,
    /** Under the base URL: `{baseUrl}/mcp`. */
    mcpPath: '/mcp',
    mcpRequireAuth: false,
    /** A streaming action called as a tool: the most events one call collects (docs/streaming.md#mcp). */
    mcpMaxStreamEvents: 1000,
    /** A streaming action called as a tool: the most bytes of events' JSON one call collects. */
    mcpMaxStreamBytes: 8 * MB,
    openapiEnabled: false,
    /** Under the base URL: `{baseUrl}/openapi.json`. */
    openapiPath: '/openapi.json',
    /** Under the base URL: `{baseUrl}/reference`. */
    openapiReferencePath: '/reference',
    openapiReference: true,
    openapiPublic: false,
    /** The document's `info.version` when `rest.openapi.info.version` is not given. */
    openapiVersion: '1.0.0',
    /** Per-action routes: on whenever the document is served; `rest.openapi.actionRoutes: true` turns them on without it. */
    actionRoutes: false,
    /** Deepest nesting of arrays and objects a JSON body may have (docs/security.md). */
    maxDepth: 64,
    /** Static files: a symbolic link that leaves `staticDir` answers 404 unless this is true. */
    staticFollowSymlinks: false,
    /** `rest.compression`: br and gzip answers of this many bytes or more (smaller ones stay raw). */
    compressionThreshold: 1024,
    compressionEncodings: Object.freeze(['br', 'gzip'] as const),
  }),
  /** `rest.streams`: streaming actions over Server-Sent Events (docs/streaming.md). */
  streams: Object.freeze({
    /** A `: keep-alive` comment on a stream silent this long (ms), so proxies keep it open. */
    keepAlive: 15_000,
    /** Longest life of one stream (ms); it then ends with an `FA_ERR_STREAM_DURATION` error event. */
    maxDuration: 3_600_000,
    /** Open streams per client key at once (the rate limiter's key; only with `rest.rateLimiting`). */
    maxPerClient: 32,
    /** How long (ms) a stream's final event may take to reach the client; a socket that does not take it is destroyed. */
    endTimeout: 5_000,
  }),
  /** `rest.underPressure: true`: load shedding with these thresholds (off unless asked for). */
  underPressure: Object.freeze({
    maxEventLoopDelay: 1000,
    maxEventLoopUtilization: 0.98,
    maxHeapUsedBytes: 0,
    maxRssBytes: 0,
    retryAfter: 10,
    sampleInterval: 1000,
  }),
  cors: Object.freeze({
    credentials: true,
    allowHeaders: Object.freeze(['Content-Type', 'Authorization']),
    /** Added to `allowHeaders` when `rest.mcp` is on: MCP's Streamable HTTP clients send it on every request. */
    mcpAllowHeaders: Object.freeze(['Mcp-Protocol-Version']),
    /** Added to `allowHeaders` when an action streams: a reconnecting SSE client sends it (docs/streaming.md#resume). */
    streamAllowHeaders: Object.freeze(['Last-Event-ID']),
    /** Added to `allowHeaders` when an action takes idempotency keys (docs/idempotency.md). */
    idempotencyAllowHeaders: Object.freeze(['Idempotency-Key']),
    /** Added to `exposeHeaders` when an action takes idempotency keys: a replayed answer says so. */
    idempotencyExposeHeaders: Object.freeze(['Idempotent-Replayed']),
    allowMethods: Object.freeze(['POST', 'GET', 'OPTIONS']),
    exposeHeaders: Object.freeze(['Content-Length']),
    maxAge: 600,
  }),
  rateLimiting: Object.freeze({
    windowMs: 900_000,
    limit: 100,
    standardHeaders: true,
    /** Keys the in-memory store holds; counts are exact while a window sees no more distinct keys. */
    cacheSize: 100_000,
    /** The longest a request waits on the store (Redis): past it the request is served unlimited, logged. */
    storeTimeoutMs: 1_000,
  }),
  /** `rest.idempotency`: Idempotency-Key answers and the store that keeps them (docs/idempotency.md). */
  idempotency: Object.freeze({
    /** How long a finished request's answer is replayed (ms): 24 hours. */
    ttl: 86_400_000,
    /** How long a running request holds its key (ms); at least the action's timeout plus a second. */
    lease: 60_000,
    /** Longest wait for one store call (ms). */
    timeout: 2_000,
    /** Keys the in-memory store holds; the oldest goes first. */
    maxKeys: 100_000,
  }),
  uploads: Object.freeze({
    enforceContentType: false,
    limits: Object.freeze({
      maxFiles: 10,
      maxFileSize: 10 * MB,
      minFileSize: 1,
      maxTotalSize: 20 * MB,
      maxFilenameLength: 128,
      maxFields: 100,
      maxFieldSize: 64 * 1024,
    }),
    mimeTypes: Object.freeze(['image/png', 'image/jpeg', 'application/pdf']),
    extensions: Object.freeze(['.png', '.jpg', '.jpeg', '.pdf']),
  }),
  auth: Object.freeze({
    method: 'header',
    headerName: 'authorization',
    cookieName: 'auth_token',
    algorithms: Object.freeze(['HS256']),
    /** Lifetime of the tokens the server signs when the call names none. */
    expiresIn: '1h',
  }),
} as const)

export interface OnBootConfig {
  fn: (context: ServerContext) => Result<null, string> | Promise<Result<null, string>>
  maxWaitTime?: number
}

/** The part of `ServerConfig` that knows no HTTP. */
export interface CoreConfig<TDB = unknown> {
  serverName: string
  runtime?: 'bun' | 'node'
  services: Service[]
  diagnostics?: boolean
  logServices?: boolean
  resources?: Resources<TDB>
  /** Placeholder: accepted and ignored. */
  websocket?: Record<string, unknown>
  /** Placeholder: accepted and ignored. */
  rpc?: Record<string, unknown>
  onBeforeActionHandler?: BeforeActionHandler
  onAfterActionHandler?: AfterActionHandler
  onBoot?: OnBootConfig
  forceNewInstance?: boolean
  /** Default timeout in ms for every action handler; none by default. */
  actionTimeout?: number
  /**
   * Answer a thrown exception's own text (the specification's rule). Default: true, except when
   * `NODE_ENV` is `production`: then the answer is `Internal server error (request id <id>)` and the
   * text goes to the log only (an exception can carry a database URL, a path, a password).
   */
  exposeErrors?: boolean
}

/** Every key of `CoreConfig` (the unknown-key check, lib/config-keys.ts): a key added to the type must be added here. */
export const CORE_KEYS: KeyTable<CoreConfig> = Object.freeze({
  serverName: true,
  runtime: true,
  services: true,
  diagnostics: true,
  logServices: true,
  resources: true,
  websocket: true,
  rpc: true,
  onBeforeActionHandler: true,
  onAfterActionHandler: true,
  onBoot: Object.freeze({ fn: true, maxWaitTime: true } satisfies KeyTable<OnBootConfig>),
  forceNewInstance: true,
  actionTimeout: true,
  exposeErrors: true,
})

/** `CoreConfig` with every default applied, frozen. */
export interface ResolvedCoreConfig {
  readonly serverName: string
  readonly runtime: 'bun' | 'node'
  readonly services: readonly Service[]
  readonly diagnostics: boolean
  readonly logServices: boolean
  readonly resources: Resources<any>
  readonly onBeforeActionHandler?: BeforeActionHandler
  readonly onAfterActionHandler?: AfterActionHandler
  readonly onBoot?: { readonly fn: OnBootConfig['fn']; readonly maxWaitTime: number }
  readonly forceNewInstance: boolean
  readonly actionTimeout?: number
  readonly exposeErrors: boolean
}

/** A configuration error naming the field: `createServer: <field> <expectation>, got <value>`. */
export function configError(field: string, expectation: string, value?: unknown): Error {
  const got = arguments.length > 2 ? `, got ${describe(value)}` : ''
  return new ErrConfig(`createServer: ${field} ${expectation}${got}`)
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`
  if (typeof value === 'function') return 'a function'
  // JSON writes NaN and Infinity as null: `Number('abc')` must read as what it is.
  if (typeof value === 'number') return String(value)
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

/** `value` when it is a positive integer (or undefined: then `fallback`); else a config error. */
export function positiveInteger(field: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) throw configError(field, 'must be a positive integer', value)
  return value
}

export function optionalBoolean(field: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback
  if (typeof value !== 'boolean') throw configError(field, 'must be a boolean', value)
  return value
}

function optionalFunction<F>(field: string, value: F | undefined): F | undefined {
  if (value !== undefined && typeof value !== 'function') throw configError(field, 'must be a function', value)
  return value
}

/** Checks and completes the core configuration once, at boot. */
export function resolveCoreConfig<TDB>(config: CoreConfig<TDB>): ResolvedCoreConfig {
  if (!Array.isArray(config?.services) || config.services.length === 0) throw new ErrEmptyServices()
  if (typeof config.serverName !== 'string') throw configError('serverName', 'must be a string', config.serverName)
  const runtime = config.runtime ?? DEFAULTS.runtime
  if (runtime !== 'bun' && runtime !== 'node') throw configError('runtime', "must be 'bun' or 'node'", runtime)
  const onBoot = config.onBoot
  if (onBoot !== undefined && (typeof onBoot !== 'object' || onBoot === null || typeof onBoot.fn !== 'function')) {
    throw configError('onBoot', 'must be { fn, maxWaitTime? }', onBoot)
  }
  return Object.freeze({
    serverName: config.serverName,
    runtime,
    services: Object.freeze(config.services.slice()),
    diagnostics: optionalBoolean('diagnostics', config.diagnostics, DEFAULTS.diagnostics),
    logServices: config.logServices !== false,
    resources: config.resources ?? {},
    onBeforeActionHandler: optionalFunction('onBeforeActionHandler', config.onBeforeActionHandler),
    onAfterActionHandler: optionalFunction('onAfterActionHandler', config.onAfterActionHandler),
    onBoot: onBoot && Object.freeze({ fn: onBoot.fn, maxWaitTime: positiveInteger('onBoot.maxWaitTime', onBoot.maxWaitTime, DEFAULTS.onBootMaxWaitTime) }),
    forceNewInstance: config.forceNewInstance === true,
    actionTimeout: config.actionTimeout === undefined ? undefined : positiveInteger('actionTimeout', config.actionTimeout, 0),
    exposeErrors: optionalBoolean('exposeErrors', config.exposeErrors, process.env.NODE_ENV !== DEFAULTS.hideErrorsIn),
  })
}
