/**
 * The assembly of the configuration's HTTP side: `DEFAULTS` (every default, from the pieces that own
 * them), `RestConfig` and `ResolvedRest` composed from each feature's types, `REST_KEYS` from each
 * feature's key table, and `resolveRest`, which calls each feature's resolver. Each feature's options
 * (type, defaults, keys, resolver) live beside its plugin in plugins/*-config.ts.
 */
import { CORE_DEFAULTS, configError, optionalBoolean, positiveInteger } from '../lib/config.js'
import type { KeyTable } from '../lib/config-keys.js'
import { resolveUploadSettings, UPLOADS_KEYS, type UploadSettings, type UploadsConfig } from '../lib/uploads/config.js'
import { AUTH_DEFAULTS } from './auth-config.js'
import { COMPRESSION_KEYS, resolveCompression, type CompressionConfig, type ResolvedCompression } from './compression-config.js'
import { CORS_DEFAULTS, CORS_KEYS, resolveCors, type CorsConfig } from './cors-config.js'
import { IDEMPOTENCY_DEFAULTS, IDEMPOTENCY_KEYS, resolveIdempotency, type IdempotencyConfig, type ResolvedIdempotency } from './idempotency-config.js'
import { MCP_KEYS, resolveMcp, type McpConfig, type ResolvedMcp } from './mcp-config.js'
import { OPENAPI_KEYS, resolveActionRoutes, resolveOpenApi, type OpenApiConfig, type ResolvedOpenApi } from './openapi-config.js'
import { RATE_LIMIT_DEFAULTS, RATE_LIMIT_KEYS, resolveRateLimit, type RateLimitConfig, type ResolvedRateLimit } from './rate-limit-config.js'
import {
  DISCOVERY_KEYS,
  normalizeBaseUrl,
  resolveAllowedHosts,
  resolveHost,
  resolvePort,
  REST_DEFAULTS,
  type DiscoveryConfig,
  type FastifyOptions,
} from './rest-config.js'
import { resolveStreams, STREAM_DEFAULTS, STREAMS_KEYS, type ResolvedStreams, type StreamsConfig } from './stream-config.js'
import { resolveUnderPressure, UNDER_PRESSURE_DEFAULTS, UNDER_PRESSURE_KEYS, type ResolvedUnderPressure, type UnderPressureConfig } from './under-pressure-config.js'

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

/**
 * Every key of `RestConfig`, for the unknown-key check (lib/config-keys.ts), composed from each
 * feature's own table: an option added to a type must be added to its table (it does not compile
 * otherwise). `fastify` (Fastify's own options) and lists are taken as they are.
 */
export const REST_KEYS: KeyTable<RestConfig> = Object.freeze({
  baseUrl: true,
  host: true,
  port: true,
  diagnostics: true,
  enableStatic: true,
  staticDir: true,
  enableStatus: true,
  rateLimiting: RATE_LIMIT_KEYS,
  allowedOrigins: true,
  allowedHosts: true,
  cors: CORS_KEYS,
  uploads: UPLOADS_KEYS,
  discovery: DISCOVERY_KEYS,
  mcp: MCP_KEYS,
  openapi: OPENAPI_KEYS,
  bodyLimit: true,
  requestTimeout: true,
  maxDepth: true,
  staticFollowSymlinks: true,
  compression: COMPRESSION_KEYS,
  underPressure: UNDER_PRESSURE_KEYS,
  streams: STREAMS_KEYS,
  idempotency: IDEMPOTENCY_KEYS,
  fastify: true,
})

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

/** Checks and completes the REST configuration once, at boot. `serverName` is the document's default title. */
export function resolveRest(rest: RestConfig, serverName = ''): ResolvedRest {
  if (typeof rest !== 'object' || rest === null) throw configError('rest', 'must be an object', rest)
  const { cors, allowedOrigins } = resolveCors(rest.cors, rest.allowedOrigins)
  const fastify = rest.fastify ?? {}
  if (typeof fastify !== 'object' || fastify === null) throw configError('rest.fastify', 'must be an object of Fastify server options', fastify)
  const baseUrl = normalizeBaseUrl(rest.baseUrl ?? REST_DEFAULTS.baseUrl)
  // rest.* wins over rest.fastify.*, which wins over the framework's default.
  const bodyLimit = positiveInteger('rest.bodyLimit', rest.bodyLimit ?? fastify.bodyLimit, REST_DEFAULTS.bodyLimit)
  const uploads = resolveUploadSettings(rest.uploads)
  const openapi = resolveOpenApi(rest.openapi, baseUrl, serverName)
  return Object.freeze({
    baseUrl,
    host: resolveHost(rest.host),
    port: resolvePort(rest.port),
    diagnostics: rest.diagnostics,
    enableStatic: rest.enableStatic === true,
    staticDir: rest.staticDir ?? REST_DEFAULTS.staticDir,
    enableStatus: rest.enableStatus === true,
    rateLimiting: resolveRateLimit(rest.rateLimiting),
    allowedOrigins,
    allowedHosts: resolveAllowedHosts(rest.allowedHosts),
    cors,
    uploads,
    uploadsDiagnostics: rest.uploads?.diagnostics,
    discovery: Object.freeze({ enabled: rest.discovery?.enabled === true, secret: rest.discovery?.secret }),
    mcp: resolveMcp(rest.mcp, baseUrl),
    bodyLimit,
    openapi,
    actionRoutes: resolveActionRoutes(rest.openapi, openapi !== undefined),
    requestTimeout: positiveInteger('rest.requestTimeout', rest.requestTimeout ?? fastify.requestTimeout, REST_DEFAULTS.requestTimeout),
    multipartLimit: multipartLimitOf(uploads.limits, bodyLimit),
    maxDepth: positiveInteger('rest.maxDepth', rest.maxDepth, REST_DEFAULTS.maxDepth),
    staticFollowSymlinks: optionalBoolean('rest.staticFollowSymlinks', rest.staticFollowSymlinks, REST_DEFAULTS.staticFollowSymlinks),
    underPressure: resolveUnderPressure(rest.underPressure),
    streams: resolveStreams(rest.streams),
    idempotency: resolveIdempotency(rest.idempotency),
    compression: resolveCompression(rest.compression),
    fastify,
  })
}
