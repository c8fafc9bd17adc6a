import type { FastifyRequest, FastifyServerOptions } from 'fastify'
import { CORE_DEFAULTS, configError, optionalBoolean, positiveInteger } from '../lib/config.js'
import { AUTH_DEFAULTS } from './auth-config.js'
import { CORS_DEFAULTS } from './cors-config.js'
import { RATE_LIMIT_DEFAULTS } from './rate-limit-config.js'
import { REST_DEFAULTS } from './rest-config.js'
import { resolveStreams, STREAM_DEFAULTS, STREAMS_KEYS, type ResolvedStreams, type StreamsConfig } from './stream-config.js'

export type { ResolvedStreams, StreamsConfig } from './stream-config.js'
import { UNDER_PRESSURE_DEFAULTS } from './under-pressure-config.js'
import type { KeyTable } from '../lib/config-keys.js'
import { ErrConfig } from '../lib/errors.js'
import { messages } from '../lib/messages.js'
import { expiresInProblem } from '../lib/token-lifetime.js'
import { IDEMPOTENCY_DEFAULTS, IDEMPOTENCY_KEYS, resolveIdempotency, type IdempotencyConfig, type ResolvedIdempotency } from './idempotency-config.js'
import { resolveUploadSettings, UPLOADS_KEYS, type UploadSettings, type UploadsConfig } from '../lib/uploads/config.js'

/**
 * Every default of the framework, in one table, assembled from the pieces that own them: the core's
 * (lib/config.ts) and each plugin's (plugins/*-config.ts). docs/server.md shows the same table, and a
 * test holds them together. Nothing else applies a default of its own.
 */
export const DEFAULTS = Object.freeze({
  ...CORE_DEFAULTS,
  rest: REST_DEFAULTS,
  streams: STREAM_DEFAULTS,
  underPressure: UNDER_PRESSURE_DEFAULTS,
  cors: CORS_DEFAULTS,
  rateLimiting: RATE_LIMIT_DEFAULTS,
  idempotency: IDEMPOTENCY_DEFAULTS,
  auth: AUTH_DEFAULTS,
})

/** JWT authentication for protected actions. */
export interface AuthConfig {
  /** The JWT verification secret (or public key for RS/ES/PS/EdDSA algorithms). */
  secret: string
  method?: 'header' | 'cookie' | 'both'
  headerName?: string
  cookieName?: string
  /** Accepted signing algorithms; HS256 by default. */
  algorithms?: string[]
  /**
   * Claims every token must carry, checked by @fastify/jwt's verifier (fast-jwt): `allowedAud`,
   * `allowedIss`, `allowedSub` (a string, a RegExp or a list of them), `requiredClaims`, `maxAge`
   * (seconds or a duration text). A single `allowedAud` / `allowedIss` string is also what tokens are signed with.
   */
  verify?: AuthVerifyConfig
  /** Lifetime of tokens the server signs when the call names none (default '1h'): seconds or a duration text. */
  expiresIn?: number | string
  /** The auth cookie `signToken({ cookie: true })` sets. */
  cookie?: AuthCookieConfig
}

/** A claim value a token must match: a string (exact), a RegExp, or a list of them (any matches). */
export type AllowedClaim = string | RegExp | Array<string | RegExp>

/** `auth.verify`: what @fastify/jwt's verifier requires of every token (fast-jwt's options of the same names). */
export interface AuthVerifyConfig {
  allowedAud?: AllowedClaim
  allowedIss?: AllowedClaim
  allowedSub?: AllowedClaim
  /** Claims that must be present (`['exp']` refuses tokens that never expire). */
  requiredClaims?: string[]
  /** Oldest accepted token, counted from `iat`: seconds or a duration text ('8h'). */
  maxAge?: number | string
}

/** `auth.cookie`. */
export interface AuthCookieConfig {
  /**
   * `Secure` on the cookie (default: set unless the request is plain HTTP to a loopback host, so a
   * server behind a TLS proxy sets it even without `trustProxy`). `false` never sets it.
   */
  secure?: boolean
}

/**
 * The part of an ioredis client that the rate limiter's Redis store calls. Structural, so that
 * fastify-actions' types never require ioredis to be installed.
 */
export interface RateLimitRedis {
  defineCommand(name: string, definition: { numberOfKeys?: number; lua: string }): void
}

/**
 * A custom rate-limit store: the contract of @fastify/rate-limit's `store`, written out here so that
 * fastify-actions' public types do not pull in that plugin's global augmentation of Fastify.
 */
export interface RateLimitStore {
  incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number, max: number): void
  child(routeOptions: Record<string, unknown> & { path: string; prefix: string }): RateLimitStore
}

/** `new Store(options)`: what `rateLimiting.store` takes. */
export interface RateLimitStoreConstructor {
  new (options: { timeWindow?: number | string; max?: unknown; [key: string]: unknown }): RateLimitStore
}

export interface RateLimitConfig {
  windowMs?: number
  limit?: number
  standardHeaders?: boolean
  /** The request header whose value is the client key; rate limiting is on only when it is set. */
  limitingHeader: string
  /** A custom @fastify/rate-limit store constructor (`new Store(options)` with `incr`, `child`); wins over `redis`. */
  store?: RateLimitStoreConstructor
  /** An ioredis client: counters shared by every instance that uses the same Redis. */
  redis?: RateLimitRedis
  /**
   * Keys the built-in in-memory store remembers (default 100000). It is an LRU: while no more than
   * this many distinct keys are seen in one window, every count is exact (docs/rate-limiting.md).
   */
  cacheSize?: number
  /**
   * The longest a request waits on the store (default 1000 ms): a stalled Redis then lets requests
   * through unlimited, logged once per outage, instead of holding them (docs/rate-limiting.md).
   */
  storeTimeoutMs?: number
  diagnostics?: boolean
}

/** Load shedding thresholds (@fastify/under-pressure); `0` switches a check off. */
export interface UnderPressureConfig {
  /** Mean event-loop delay in ms above which requests are refused (default 1000). */
  maxEventLoopDelay?: number
  /** Event-loop utilization, 0 to 1, above which requests are refused (default 0.98). */
  maxEventLoopUtilization?: number
  /** Heap used in bytes above which requests are refused (default 0: not checked). */
  maxHeapUsedBytes?: number
  /** Resident set size in bytes above which requests are refused (default 0: not checked). */
  maxRssBytes?: number
  /** Seconds sent in `Retry-After` with the 503 (default 10). */
  retryAfter?: number
  /** How often the measures are taken, in ms (default 1000). */
  sampleInterval?: number
}

export interface DiscoveryConfig {
  enabled?: boolean
  secret?: string
}

export interface CorsRequestContext {
  req: FastifyRequest
}

export type CorsOrigin = string | string[] | ((origin: string, c: CorsRequestContext) => string | undefined | null)

export interface CorsOptions {
  origin?: CorsOrigin
  allowMethods?: string[] | ((origin: string, c: CorsRequestContext) => string[])
  allowHeaders?: string[]
  maxAge?: number
  credentials?: boolean
  exposeHeaders?: string[]
}

export type CorsResolver = (origin: string, c: CorsRequestContext) => boolean | CorsOptions | undefined

export interface CorsRouteRule {
  path: string
  options?: CorsOptions
  resolver?: CorsResolver
}

export interface CorsConfig {
  enabled?: boolean | 'default'
  defaults?: CorsOptions
  addCors?: CorsRouteRule[]
}

/** `rest.mcp`: the Model Context Protocol endpoint, off unless `enabled`. */
export interface McpConfig {
  /** Default false. */
  enabled?: boolean
  /** The endpoint's path, used as given (default `{baseUrl}/mcp`). */
  path?: string
  /** Server name announced at `initialize` (default: this package's name). */
  name?: string
  /** Server version announced at `initialize` (default: this package's version). */
  version?: string
  /** Require a valid JWT (as protected actions do) for every request to the endpoint (default false). */
  requireAuth?: boolean
  /**
   * A streaming action called as a tool: the most events one call collects (default 1000). Past it
   * the action is stopped and the result says `truncated: true` (docs/streaming.md#mcp).
   */
  maxStreamEvents?: number
  /**
   * A streaming action called as a tool: the most bytes of its events' JSON one call collects
   * (default 8 MiB). Past it the action is stopped and the result says `truncated: true`.
   */
  maxStreamBytes?: number
}

/** `rest.compression` as an object. */
export interface CompressionConfig {
  /** Answers smaller than this many bytes are sent raw (default 1024). */
  threshold?: number
  /** The codings offered, in order of preference (default `['br', 'gzip']`). */
  encodings?: Array<'br' | 'gzip' | 'deflate'>
}

/** `rest.compression` resolved; absent when off. */
export interface ResolvedCompression {
  readonly threshold: number
  readonly encodings: ReadonlyArray<'br' | 'gzip' | 'deflate'>
}

/** The document's `info` (OpenAPI's Info Object): `title` and `version` default; `x-…` extensions are taken as they are. */
export interface OpenApiInfoConfig {
  title?: string
  version?: string
  description?: string
  summary?: string
  termsOfService?: string
  /** Who answers for the API: `info.contact`. */
  contact?: OpenApiContact
  /** Its license: `name` and either an SPDX `identifier` or a `url`. */
  license?: OpenApiLicense
  [extension: `x-${string}`]: unknown
}

export interface OpenApiContact {
  name?: string
  url?: string
  email?: string
  [extension: `x-${string}`]: unknown
}

export interface OpenApiLicense {
  name: string
  /** An SPDX expression (`MIT`, `Apache-2.0`); not with `url`. */
  identifier?: string
  url?: string
  [extension: `x-${string}`]: unknown
}

/** `rest.openapi`: the OpenAPI 3.1 (or 3.2) document, the reference page and the per-action routes (docs/openapi.md). */
export interface OpenApiConfig {
  /** Serve `GET {baseUrl}/openapi.json` (default false). Needs `rest.discovery.enabled`. */
  enabled?: boolean
  /** The document's path, used as given (default `{baseUrl}/openapi.json`). */
  path?: string
  /** The reference page: true (default) at `{baseUrl}/reference`, `{ path }` elsewhere, false for none. Needs `@scalar/fastify-api-reference`. */
  reference?: boolean | { path?: string }
  /** The document's `info` (default title: `serverName`, version `1.0.0`; `contact` and `license` when given). */
  info?: OpenApiInfoConfig
  /** The OpenAPI version of the document: `'3.1'` (default) or `'3.2'` (streams' events as `itemSchema`). */
  version?: '3.1' | '3.2'
  /** The document's `servers` (default: `[{ url: '/' }]`, the origin that serves the document: the paths carry the base URL). */
  servers?: Array<{ url: string; description?: string; [key: string]: unknown }>
  /** Serve the document and the page without the discovery secret (default false). */
  public?: boolean
  /** `POST {baseUrl}/services/{service}/{action}` for every visible action. Always on when `enabled`; true turns them on alone. */
  actionRoutes?: boolean
  /** Extra top-level fields merged into the document (`externalDocs`, `x-…`). */
  extra?: Record<string, unknown>
}

export interface ResolvedOpenApi {
  readonly path: string
  /** Undefined when the page is off. */
  readonly referencePath?: string
  readonly info: Readonly<OpenApiInfoConfig> & { readonly title: string; readonly version: string }
  /** The OpenAPI version the document is written in. */
  readonly version: '3.1' | '3.2'
  /** Never empty: the configured servers, else the origin that serves the document. */
  readonly servers: ReadonlyArray<{ url: string; description?: string }>
  readonly public: boolean
  readonly extra: Readonly<Record<string, unknown>>
}

export interface ResolvedMcp {
  /** Normalised: a leading and no trailing slash. */
  readonly path: string
  readonly name?: string
  readonly version?: string
  readonly requireAuth: boolean
  readonly maxStreamEvents: number
  readonly maxStreamBytes: number
}

/**
 * Fastify server options `createServer` passes through (`logger`, `trustProxy`, `genReqId`,
 * `requestIdHeader`, `https`, `http2`…). The plugin ignores them: the app is the user's.
 */
export type FastifyOptions = FastifyServerOptions & { https?: unknown; http2?: boolean; http?: Record<string, unknown> }

export interface RestConfig {
  baseUrl: string
  host?: string
  port?: number
  diagnostics?: boolean
  enableStatic?: boolean
  staticDir?: string
  enableStatus?: boolean
  rateLimiting?: RateLimitConfig
  allowedOrigins: string[]
  /**
   * Host names the server answers to (DNS rebinding, docs/security.md): exact names, `.example.com` for a
   * domain and its subdomains, `'*'` for any. Default: a server bound to a loopback address answers
   * loopback names only; bound elsewhere (or not listening) it answers any Host.
   */
  allowedHosts?: string[]
  cors?: CorsConfig
  uploads?: UploadsConfig
  discovery?: DiscoveryConfig
  /** The MCP endpoint for AI agents (docs/mcp.md); off by default. */
  mcp?: McpConfig
  /** The OpenAPI document, the reference page and the per-action routes (docs/openapi.md); off by default. */
  openapi?: OpenApiConfig
  /** Largest JSON body in bytes (default 1 MiB); a larger one is a 413 envelope. Wins over `fastify.bodyLimit`. */
  bodyLimit?: number
  /** Longest time in ms to receive a whole request, headers and body (default 30000); a slower client gets a 408. Wins over `fastify.requestTimeout`. */
  requestTimeout?: number
  /** Deepest nesting of arrays and objects in a JSON body (default 64); deeper answers 400 before the action runs. */
  maxDepth?: number
  /** Serve symbolic links under `staticDir` that point outside it (default false: they answer 404). */
  staticFollowSymlinks?: boolean
  /** Load shedding: 503 with `Retry-After` under event-loop or memory pressure. Off by default; `true` uses the defaults. */
  underPressure?: boolean | UnderPressureConfig
  /** Streaming actions over Server-Sent Events: keep-alive interval, longest duration, open streams per client. */
  streams?: StreamsConfig
  /** Idempotency keys: the store (memory, Redis or yours), how long answers are kept (docs/idempotency.md). */
  idempotency?: IdempotencyConfig
  /**
   * Response compression of the endpoint, the per-action routes, the OpenAPI document and the reference
   * page (docs/server.md): on by default (br, then gzip, for answers of 1 KiB or more); `false` for none.
   */
  compression?: boolean | CompressionConfig
  /** Fastify's own server options, for `createServer` (the plugin runs on your instance and ignores them). */
  fastify?: FastifyOptions
}

/** Every key of `AuthConfig`, for the unknown-key check (lib/config-keys.ts). */
export const AUTH_KEYS: KeyTable<AuthConfig> = Object.freeze({
  secret: true,
  method: true,
  headerName: true,
  cookieName: true,
  algorithms: true,
  verify: Object.freeze({ allowedAud: true, allowedIss: true, allowedSub: true, requiredClaims: true, maxAge: true } satisfies KeyTable<AuthVerifyConfig>),
  expiresIn: true,
  cookie: Object.freeze({ secure: true } satisfies KeyTable<AuthCookieConfig>),
})

const CORS_OPTION_KEYS: KeyTable<CorsOptions> = Object.freeze({ origin: true, allowMethods: true, allowHeaders: true, maxAge: true, credentials: true, exposeHeaders: true })

/**
 * Every key of `RestConfig`, for the unknown-key check: an option added to a type must be added
 * here (it does not compile otherwise). `fastify` (Fastify's own options), `openapi.info`,
 * `openapi.extra` and lists are taken as they are.
 */
export const REST_KEYS: KeyTable<RestConfig> = Object.freeze({
  baseUrl: true,
  host: true,
  port: true,
  diagnostics: true,
  enableStatic: true,
  staticDir: true,
  enableStatus: true,
  rateLimiting: Object.freeze({
    windowMs: true,
    limit: true,
    standardHeaders: true,
    limitingHeader: true,
    store: true,
    redis: true,
    cacheSize: true,
    storeTimeoutMs: true,
    diagnostics: true,
  } satisfies KeyTable<RateLimitConfig>),
  allowedOrigins: true,
  allowedHosts: true,
  cors: Object.freeze({ enabled: true, defaults: CORS_OPTION_KEYS, addCors: true } satisfies KeyTable<CorsConfig>),
  uploads: UPLOADS_KEYS,
  discovery: Object.freeze({ enabled: true, secret: true } satisfies KeyTable<DiscoveryConfig>),
  mcp: Object.freeze({ enabled: true, path: true, name: true, version: true, requireAuth: true, maxStreamEvents: true, maxStreamBytes: true } satisfies KeyTable<McpConfig>),
  openapi: Object.freeze({
    enabled: true,
    path: true,
    reference: Object.freeze({ path: true }),
    info: Object.freeze({
      title: true,
      version: true,
      description: true,
      summary: true,
      termsOfService: true,
      contact: Object.freeze({ name: true, url: true, email: true, 'x-*': true } satisfies KeyTable<OpenApiContact>),
      license: Object.freeze({ name: true, identifier: true, url: true, 'x-*': true } satisfies KeyTable<OpenApiLicense>),
      'x-*': true,
    } satisfies KeyTable<OpenApiInfoConfig>),
    version: true,
    servers: true,
    public: true,
    actionRoutes: true,
    extra: true,
  } satisfies KeyTable<OpenApiConfig>),
  bodyLimit: true,
  requestTimeout: true,
  maxDepth: true,
  staticFollowSymlinks: true,
  compression: Object.freeze({ threshold: true, encodings: true } satisfies KeyTable<CompressionConfig>),
  underPressure: Object.freeze({
    maxEventLoopDelay: true,
    maxEventLoopUtilization: true,
    maxHeapUsedBytes: true,
    maxRssBytes: true,
    retryAfter: true,
    sampleInterval: true,
  } satisfies KeyTable<UnderPressureConfig>),
  streams: STREAMS_KEYS,
  idempotency: IDEMPOTENCY_KEYS,
  fastify: true,
})

/** UnderPressureConfig with every default applied. */
export type ResolvedUnderPressure = Readonly<Required<UnderPressureConfig>>

/** AuthConfig with its defaults applied, checked once at boot. */
export interface ResolvedAuth {
  readonly secret: string
  readonly method: 'header' | 'cookie' | 'both'
  /** Lower-cased, as Node stores request headers. */
  readonly headerName: string
  readonly cookieName: string
  readonly algorithms: readonly string[]
  /** Undefined when not configured. */
  readonly verify?: Readonly<AuthVerifyConfig>
  readonly expiresIn: number | string
  /** Undefined: the default rule (Secure unless plain HTTP to loopback). */
  readonly cookieSecure?: boolean
}

export interface ResolvedRateLimit {
  readonly windowMs: number
  readonly limit: number
  readonly standardHeaders: boolean
  /** Lower-cased. */
  readonly limitingHeader: string
  readonly store?: RateLimitStoreConstructor
  readonly redis?: RateLimitRedis
  readonly cacheSize: number
  readonly storeTimeoutMs: number
  readonly diagnostics?: boolean
}

/** RestConfig with every default applied: what each plugin receives. */
export interface ResolvedRest {
  /** Normalised: a leading `/`, no trailing `/`, `''` for the root. */
  readonly baseUrl: string
  readonly host: string
  readonly port: number
  readonly diagnostics?: boolean
  readonly enableStatic: boolean
  readonly staticDir: string
  readonly enableStatus: boolean
  /** Present only when `limitingHeader` is set. */
  readonly rateLimiting?: ResolvedRateLimit
  readonly allowedOrigins: readonly string[]
  /** Undefined when not configured (the loopback default applies). */
  readonly allowedHosts?: readonly string[]
  /** Undefined when CORS is off. */
  readonly cors?: CorsConfig
  readonly uploads: UploadSettings
  readonly uploadsDiagnostics?: boolean
  readonly discovery: { readonly enabled: boolean; readonly secret?: string }
  /** Present only when `rest.mcp.enabled` is true. */
  readonly mcp?: ResolvedMcp
  /** Present only when `rest.openapi.enabled` is true. */
  readonly openapi?: ResolvedOpenApi
  /** True when the per-action routes are served. */
  readonly actionRoutes: boolean
  readonly bodyLimit: number
  readonly requestTimeout: number
  /** Largest multipart body in bytes, derived from the upload limits (or `bodyLimit` when larger). */
  readonly multipartLimit: number
  readonly maxDepth: number
  readonly staticFollowSymlinks: boolean
  /** Present only when load shedding is on. */
  readonly underPressure?: ResolvedUnderPressure
  readonly streams: ResolvedStreams
  readonly idempotency: ResolvedIdempotency
  /** Absent when `rest.compression` is false. */
  readonly compression?: ResolvedCompression
  readonly fastify: FastifyOptions
}

/** Normalises the base URL: a leading slash, no trailing slash, `''` for the root. */
export function normalizeBaseUrl(baseUrl: string | undefined): string {
  const trimmed = (baseUrl ?? '').trim().replace(/\/+$/, '')
  if (trimmed === '') return ''
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`
}

/** The shortest HMAC secret accepted in production: 256 bits, the size of an HS256 key. */
const MIN_SECRET_BYTES = 32

/** Secrets that sample files, compose files and tutorials print: anyone can sign tokens with them. */
const PLACEHOLDER_SECRET = /change-?me|replace-?me|your-?(jwt-?)?secret|^(secret|jwt-?secret|my-?secret|super-?secret|password|test|example)$/

/**
 * In production (`NODE_ENV=production`) an HMAC secret (HS256/384/512) must be at least 32 bytes and
 * not a known placeholder: a token forged with a public default would be accepted as any user.
 */
function checkProductionSecret(secret: string, algorithms: readonly string[]): void {
  if (process.env.NODE_ENV !== DEFAULTS.hideErrorsIn || !algorithms.some((name) => name.startsWith('HS'))) return
  const normalized = secret.trim().toLowerCase().replace(/[\s_]+/g, '-')
  if (PLACEHOLDER_SECRET.test(normalized)) throw new ErrConfig(messages.authPlaceholderSecret)
  const bytes = Buffer.byteLength(secret)
  if (bytes < MIN_SECRET_BYTES) throw new ErrConfig(messages.authShortSecret(bytes, MIN_SECRET_BYTES))
}

export function resolveAuth(config: AuthConfig): ResolvedAuth {
  if (typeof config?.secret !== 'string' || config.secret === '') throw new ErrConfig(messages.authNoSecret)
  const method = config.method ?? DEFAULTS.auth.method
  if (method !== 'header' && method !== 'cookie' && method !== 'both') throw new ErrConfig(messages.authBadMethod(String(method)))
  const algorithms = config.algorithms ?? DEFAULTS.auth.algorithms
  if (!Array.isArray(algorithms) || algorithms.length === 0 || algorithms.includes('none')) {
    throw new ErrConfig(messages.authBadAlgorithms)
  }
  checkProductionSecret(config.secret, algorithms)
  const expiresIn = config.expiresIn ?? DEFAULTS.auth.expiresIn
  const expiresProblem = expiresInProblem(expiresIn)
  if (expiresProblem) throw configError('auth.expiresIn', expiresProblem.replace(/^expiresIn /, ''))
  if (config.cookie !== undefined && (typeof config.cookie !== 'object' || config.cookie === null)) throw configError('auth.cookie', 'must be an object', config.cookie)
  return Object.freeze({
    secret: config.secret,
    method,
    headerName: (config.headerName ?? DEFAULTS.auth.headerName).toLowerCase(),
    cookieName: config.cookieName ?? DEFAULTS.auth.cookieName,
    algorithms: Object.freeze([...algorithms]),
    verify: resolveAuthVerify(config.verify),
    expiresIn,
    cookieSecure: config.cookie?.secure === undefined ? undefined : optionalBoolean('auth.cookie.secure', config.cookie.secure, true),
  })
}

function isAllowedClaim(value: unknown): boolean {
  const one = (item: unknown) => (typeof item === 'string' && item !== '') || item instanceof RegExp
  return one(value) || (Array.isArray(value) && value.length > 0 && value.every(one))
}

const verifyKeys = new Set(['allowedAud', 'allowedIss', 'allowedSub', 'requiredClaims', 'maxAge'])

function resolveAuthVerify(verify: AuthVerifyConfig | undefined): Readonly<AuthVerifyConfig> | undefined {
  if (verify === undefined) return undefined
  if (typeof verify !== 'object' || verify === null) throw configError('auth.verify', 'must be an object', verify)
  for (const key of Object.keys(verify)) {
    if (!verifyKeys.has(key)) throw configError(`auth.verify.${key}`, 'is not an option (allowedAud, allowedIss, allowedSub, requiredClaims, maxAge)')
  }
  for (const key of ['allowedAud', 'allowedIss', 'allowedSub'] as const) {
    if (verify[key] !== undefined && !isAllowedClaim(verify[key])) throw configError(`auth.verify.${key}`, 'must be a string, a RegExp or a list of them', verify[key])
  }
  const { requiredClaims, maxAge } = verify
  if (requiredClaims !== undefined && (!Array.isArray(requiredClaims) || !requiredClaims.every((claim) => typeof claim === 'string' && claim !== ''))) {
    throw configError('auth.verify.requiredClaims', 'must be a list of claim names', requiredClaims)
  }
  if (maxAge !== undefined) {
    const problem = expiresInProblem(maxAge)
    if (problem) throw configError('auth.verify.maxAge', problem.replace(/^expiresIn /, ''))
  }
  return Object.freeze({ ...verify })
}

function resolveRateLimit(config: RateLimitConfig | undefined): ResolvedRateLimit | undefined {
  if (!config?.limitingHeader) return undefined
  if (typeof config.limitingHeader !== 'string') throw configError('rest.rateLimiting.limitingHeader', 'must be a header name', config.limitingHeader)
  return Object.freeze({
    windowMs: positiveInteger('rest.rateLimiting.windowMs', config.windowMs, DEFAULTS.rateLimiting.windowMs),
    limit: positiveInteger('rest.rateLimiting.limit', config.limit, DEFAULTS.rateLimiting.limit),
    standardHeaders: optionalBoolean('rest.rateLimiting.standardHeaders', config.standardHeaders, DEFAULTS.rateLimiting.standardHeaders),
    limitingHeader: config.limitingHeader.toLowerCase(),
    store: config.store,
    redis: config.redis,
    cacheSize: positiveInteger('rest.rateLimiting.cacheSize', config.cacheSize, DEFAULTS.rateLimiting.cacheSize),
    storeTimeoutMs: positiveInteger('rest.rateLimiting.storeTimeoutMs', config.storeTimeoutMs, DEFAULTS.rateLimiting.storeTimeoutMs),
    diagnostics: config.diagnostics,
  })
}

function resolveMcp(config: McpConfig | undefined, baseUrl: string): ResolvedMcp | undefined {
  if (!optionalBoolean('rest.mcp.enabled', config?.enabled, DEFAULTS.rest.mcpEnabled) || !config) return undefined
  if (config.path !== undefined && typeof config.path !== 'string') throw configError('rest.mcp.path', 'must be a path', config.path)
  const path = config.path?.trim().replace(/\/+$/, '')
  return Object.freeze({
    path: path ? (path.startsWith('/') ? path : `/${path}`) : `${baseUrl}${DEFAULTS.rest.mcpPath}`,
    name: config.name,
    version: config.version,
    requireAuth: optionalBoolean('rest.mcp.requireAuth', config.requireAuth, DEFAULTS.rest.mcpRequireAuth),
    maxStreamEvents: positiveInteger('rest.mcp.maxStreamEvents', config.maxStreamEvents, DEFAULTS.rest.mcpMaxStreamEvents),
    maxStreamBytes: positiveInteger('rest.mcp.maxStreamBytes', config.maxStreamBytes, DEFAULTS.rest.mcpMaxStreamBytes),
  })
}

function nonNegative(field: string, value: unknown, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > max) {
    throw configError(field, max === 1 ? 'must be a number from 0 to 1' : 'must be a non-negative number', value)
  }
  return value
}

function resolveUnderPressure(config: RestConfig['underPressure']): ResolvedUnderPressure | undefined {
  if (config === undefined || config === false) return undefined
  if (config !== true && (typeof config !== 'object' || config === null)) throw configError('rest.underPressure', 'must be a boolean or an object of thresholds', config)
  const given: UnderPressureConfig = config === true ? {} : config
  const d = DEFAULTS.underPressure
  return Object.freeze({
    maxEventLoopDelay: nonNegative('rest.underPressure.maxEventLoopDelay', given.maxEventLoopDelay, d.maxEventLoopDelay),
    maxEventLoopUtilization: nonNegative('rest.underPressure.maxEventLoopUtilization', given.maxEventLoopUtilization, d.maxEventLoopUtilization, 1),
    maxHeapUsedBytes: nonNegative('rest.underPressure.maxHeapUsedBytes', given.maxHeapUsedBytes, d.maxHeapUsedBytes),
    maxRssBytes: nonNegative('rest.underPressure.maxRssBytes', given.maxRssBytes, d.maxRssBytes),
    retryAfter: positiveInteger('rest.underPressure.retryAfter', given.retryAfter, d.retryAfter),
    sampleInterval: positiveInteger('rest.underPressure.sampleInterval', given.sampleInterval, d.sampleInterval),
  })
}

/** Bytes a multipart part may spend on its delimiter line and headers (docs/uploads.md). */
export const MULTIPART_PART_OVERHEAD = 8 * 1024

/**
 * The largest multipart body: every file and field at its limit plus each part's overhead, or
 * `bodyLimit` when that is larger. With the default limits: 20 MiB + 100 × 64 KiB + 113 × 8 KiB.
 */
export function multipartLimitOf(limits: UploadSettings['limits'], bodyLimit: number): number {
  const parts = limits.maxFiles + limits.maxFields + 3
  return Math.max(bodyLimit, limits.maxTotalSize + limits.maxFields * limits.maxFieldSize + parts * MULTIPART_PART_OVERHEAD)
}

function optionalPath(field: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback
  if (typeof value !== 'string' || value.trim() === '') throw configError(field, 'must be a path', value)
  const path = value.trim().replace(/\/+$/, '')
  return path.startsWith('/') ? path : `/${path}`
}

/** `rest.openapi.info` with its defaults, `contact` and `license` checked as OpenAPI defines them. */
function resolveInfo(info: OpenApiInfoConfig | undefined = {}, serverName: string): ResolvedOpenApi['info'] {
  if (typeof info !== 'object' || info === null) throw configError('rest.openapi.info', 'must be an object', info)
  const { contact, license } = info
  if (contact !== undefined) {
    if (typeof contact !== 'object' || contact === null) throw configError('rest.openapi.info.contact', 'must be an object of { name, url, email }', contact)
    for (const field of ['name', 'url', 'email'] as const) {
      if (contact[field] !== undefined && typeof contact[field] !== 'string') throw configError(`rest.openapi.info.contact.${field}`, 'must be a string', contact[field])
    }
  }
  if (license !== undefined) {
    if (typeof license !== 'object' || license === null || typeof license.name !== 'string' || license.name === '') {
      throw configError('rest.openapi.info.license', 'must be an object with a name (and an SPDX identifier or a url)', license)
    }
    if (license.identifier !== undefined && license.url !== undefined) throw configError('rest.openapi.info.license', 'takes an identifier or a url, not both (OpenAPI)')
  }
  return Object.freeze({ ...info, title: info.title ?? serverName, version: info.version ?? DEFAULTS.rest.openapiVersion })
}

function resolveOpenApi(config: OpenApiConfig | undefined, baseUrl: string, serverName: string): ResolvedOpenApi | undefined {
  if (config !== undefined && (typeof config !== 'object' || config === null)) throw configError('rest.openapi', 'must be an object', config)
  if (!optionalBoolean('rest.openapi.enabled', config?.enabled, DEFAULTS.rest.openapiEnabled) || !config) return undefined
  if (config.actionRoutes === false) throw configError('rest.openapi.actionRoutes', 'cannot be false while the document is served (the document lists the routes)', false)
  const reference = config.reference ?? DEFAULTS.rest.openapiReference
  if (typeof reference !== 'boolean' && (typeof reference !== 'object' || reference === null)) throw configError('rest.openapi.reference', 'must be a boolean or { path }', reference)
  const referencePath = reference === false ? undefined : optionalPath('rest.openapi.reference.path', reference === true ? undefined : reference.path, `${baseUrl}${DEFAULTS.rest.openapiReferencePath}`)
  if (config.servers !== undefined && (!Array.isArray(config.servers) || config.servers.length === 0 || !config.servers.every((server) => typeof server?.url === 'string'))) {
    throw configError('rest.openapi.servers', 'must be a non-empty array of { url }', config.servers)
  }
  const version = config.version ?? DEFAULTS.rest.openapiSpecVersion
  if (version !== '3.1' && version !== '3.2') throw configError('rest.openapi.version', "must be '3.1' or '3.2'", version)
  return Object.freeze({
    path: optionalPath('rest.openapi.path', config.path, `${baseUrl}${DEFAULTS.rest.openapiPath}`),
    referencePath,
    info: resolveInfo(config.info, serverName),
    version,
    servers: Object.freeze((config.servers ?? [{ url: DEFAULTS.rest.openapiServerUrl, description: 'The server that serves this document' }]).map((server) => Object.freeze({ ...server }))),
    public: optionalBoolean('rest.openapi.public', config.public, DEFAULTS.rest.openapiPublic),
    extra: Object.freeze({ ...(config.extra ?? {}) }),
  })
}

function resolveAllowedHosts(value: unknown): readonly string[] | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value) || !value.every((host) => typeof host === 'string' && host.trim() !== '')) {
    throw configError('rest.allowedHosts', "must be an array of host names (such as 'api.example.com', '.example.com' or '*')", value)
  }
  return Object.freeze([...value])
}

function resolveHost(value: unknown): string {
  if (value === undefined) return DEFAULTS.rest.host
  if (typeof value !== 'string' || value.trim() === '') throw configError('rest.host', 'must be a host name or address', value)
  return value
}

/** A TCP port: an integer from 0 (any free port) to 65535. `Number('abc')` is NaN, and is refused here rather than printed. */
function resolvePort(value: unknown): number {
  if (value === undefined) return DEFAULTS.rest.port
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 65535) throw configError('rest.port', 'must be an integer from 0 to 65535', value)
  return value
}

/** Checks and completes the REST configuration once, at boot. `serverName` is the document's default title. */
export function resolveRest(rest: RestConfig, serverName = ''): ResolvedRest {
  if (typeof rest !== 'object' || rest === null) throw configError('rest', 'must be an object', rest)
  const corsEnabled = rest.cors?.enabled !== false
  const listed = Array.isArray(rest.allowedOrigins) && rest.allowedOrigins.every((origin) => typeof origin === 'string')
  if (!listed && corsEnabled) throw new ErrConfig(messages.corsAllowedOrigins)
  // With CORS off the list only narrows cookie auth's cross-site check, where none listed is the strictest.
  const allowedOrigins = listed ? rest.allowedOrigins : []
  const fastify = rest.fastify ?? {}
  if (typeof fastify !== 'object' || fastify === null) throw configError('rest.fastify', 'must be an object of Fastify server options', fastify)
  const baseUrl = normalizeBaseUrl(rest.baseUrl ?? DEFAULTS.rest.baseUrl)
  // rest.* wins over rest.fastify.*, which wins over the framework's default.
  const bodyLimit = positiveInteger('rest.bodyLimit', rest.bodyLimit ?? fastify.bodyLimit, DEFAULTS.rest.bodyLimit)
  const uploads = resolveUploadSettings(rest.uploads)
  const openapi = resolveOpenApi(rest.openapi, baseUrl, serverName)
  return Object.freeze({
    baseUrl,
    host: resolveHost(rest.host),
    port: resolvePort(rest.port),
    diagnostics: rest.diagnostics,
    enableStatic: rest.enableStatic === true,
    staticDir: rest.staticDir ?? DEFAULTS.rest.staticDir,
    enableStatus: rest.enableStatus === true,
    rateLimiting: resolveRateLimit(rest.rateLimiting),
    allowedOrigins: Object.freeze([...allowedOrigins]),
    allowedHosts: resolveAllowedHosts(rest.allowedHosts),
    cors: corsEnabled ? (rest.cors ?? {}) : undefined,
    uploads,
    uploadsDiagnostics: rest.uploads?.diagnostics,
    discovery: Object.freeze({ enabled: rest.discovery?.enabled === true, secret: rest.discovery?.secret }),
    mcp: resolveMcp(rest.mcp, baseUrl),
    bodyLimit,
    openapi,
    actionRoutes: openapi !== undefined || optionalBoolean('rest.openapi.actionRoutes', rest.openapi?.actionRoutes, DEFAULTS.rest.actionRoutes),
    requestTimeout: positiveInteger('rest.requestTimeout', rest.requestTimeout ?? fastify.requestTimeout, DEFAULTS.rest.requestTimeout),
    multipartLimit: multipartLimitOf(uploads.limits, bodyLimit),
    maxDepth: positiveInteger('rest.maxDepth', rest.maxDepth, DEFAULTS.rest.maxDepth),
    staticFollowSymlinks: optionalBoolean('rest.staticFollowSymlinks', rest.staticFollowSymlinks, DEFAULTS.rest.staticFollowSymlinks),
    underPressure: resolveUnderPressure(rest.underPressure),
    streams: resolveStreams(rest.streams),
    idempotency: resolveIdempotency(rest.idempotency),
    compression: resolveCompression(rest.compression),
    fastify,
  })
}

const CODINGS = new Set(['br', 'gzip', 'deflate'])

/** `rest.compression`: `true` or absent for the defaults, `false` for none. */
function resolveCompression(config: RestConfig['compression']): ResolvedCompression | undefined {
  if (config === false) return undefined
  if (config !== undefined && config !== true && (typeof config !== 'object' || config === null)) throw configError('rest.compression', 'must be a boolean or { threshold, encodings }', config)
  const given = typeof config === 'object' ? config : {}
  const threshold = given.threshold ?? DEFAULTS.rest.compressionThreshold
  if (!Number.isInteger(threshold) || threshold < 0) throw configError('rest.compression.threshold', 'must be an integer of 0 or more (bytes)', threshold)
  const encodings = given.encodings ?? DEFAULTS.rest.compressionEncodings
  if (!Array.isArray(encodings) || encodings.length === 0 || !encodings.every((coding) => CODINGS.has(coding))) {
    throw configError('rest.compression.encodings', "must be a non-empty list of 'br', 'gzip', 'deflate'", encodings)
  }
  return Object.freeze({ threshold, encodings: Object.freeze([...encodings]) })
}
