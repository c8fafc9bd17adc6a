/** `rest.cors` and `rest.allowedOrigins`, the CORS plugin's options (plugins/cors.ts): their types, defaults, keys and resolver. */
import type { FastifyRequest } from 'fastify'
import type { KeyTable } from '../lib/config-keys.js'
import { ErrConfig } from '../lib/errors.js'
import { messages } from '../lib/messages.js'

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

const CORS_OPTION_KEYS: KeyTable<CorsOptions> = Object.freeze({ origin: true, allowMethods: true, allowHeaders: true, maxAge: true, credentials: true, exposeHeaders: true })

/** The keys `rest.cors` accepts (lib/config-keys.ts refuses any other); `addCors` rules are taken as they are. */
export const CORS_KEYS = Object.freeze({ enabled: true, defaults: CORS_OPTION_KEYS, addCors: true } satisfies KeyTable<CorsConfig>)

/** The CORS plugin's defaults (`rest.cors`): what every answer allows and exposes. */
export const CORS_DEFAULTS = Object.freeze({
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
} as const)

/** `rest.cors` and `rest.allowedOrigins` resolved: `cors` is undefined when CORS is off. */
export interface ResolvedCors {
  readonly cors?: CorsConfig
  readonly allowedOrigins: readonly string[]
}

/** Checks `rest.cors` and `rest.allowedOrigins` once, at boot: CORS is on unless `enabled: false`, and then needs the list. */
export function resolveCors(config: CorsConfig | undefined, allowedOrigins: unknown): ResolvedCors {
  const enabled = config?.enabled !== false
  const listed = isStringList(allowedOrigins)
  if (!listed && enabled) throw new ErrConfig(messages.corsAllowedOrigins)
  // With CORS off the list only narrows cookie auth's cross-site check, where none listed is the strictest.
  return { cors: enabled ? (config ?? {}) : undefined, allowedOrigins: Object.freeze(listed ? [...allowedOrigins] : []) }
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string')
}
