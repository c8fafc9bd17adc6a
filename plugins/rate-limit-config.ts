/** `rest.rateLimiting`, the rate limiter's options (plugins/rate-limit.ts): their types, defaults, keys and resolver. */
import { configError, optionalBoolean, positiveInteger } from '../lib/config.js'
import type { KeyTable } from '../lib/config-keys.js'

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

/** The keys `rest.rateLimiting` accepts (lib/config-keys.ts refuses any other). */
export const RATE_LIMIT_KEYS = Object.freeze({
  windowMs: true,
  limit: true,
  standardHeaders: true,
  limitingHeader: true,
  store: true,
  redis: true,
  cacheSize: true,
  storeTimeoutMs: true,
  diagnostics: true,
} satisfies KeyTable<RateLimitConfig>)

/** The rate limiter's defaults (`rest.rateLimiting`). */
export const RATE_LIMIT_DEFAULTS = Object.freeze({
  windowMs: 900_000,
  limit: 100,
  standardHeaders: true,
  /** Keys the in-memory store holds; counts are exact while a window sees no more distinct keys. */
  cacheSize: 100_000,
  /** The longest a request waits on the store (Redis): past it the request is served unlimited, logged. */
  storeTimeoutMs: 1_000,
} as const)

/** Checks and completes `rest.rateLimiting` once, at boot; undefined (no limiting) without a `limitingHeader`. */
export function resolveRateLimit(config: RateLimitConfig | undefined): ResolvedRateLimit | undefined {
  if (!config?.limitingHeader) return undefined
  if (typeof config.limitingHeader !== 'string') throw configError('rest.rateLimiting.limitingHeader', 'must be a header name', config.limitingHeader)
  return Object.freeze({
    windowMs: positiveInteger('rest.rateLimiting.windowMs', config.windowMs, RATE_LIMIT_DEFAULTS.windowMs),
    limit: positiveInteger('rest.rateLimiting.limit', config.limit, RATE_LIMIT_DEFAULTS.limit),
    standardHeaders: optionalBoolean('rest.rateLimiting.standardHeaders', config.standardHeaders, RATE_LIMIT_DEFAULTS.standardHeaders),
    limitingHeader: config.limitingHeader.toLowerCase(),
    store: config.store,
    redis: config.redis,
    cacheSize: positiveInteger('rest.rateLimiting.cacheSize', config.cacheSize, RATE_LIMIT_DEFAULTS.cacheSize),
    storeTimeoutMs: positiveInteger('rest.rateLimiting.storeTimeoutMs', config.storeTimeoutMs, RATE_LIMIT_DEFAULTS.storeTimeoutMs),
    diagnostics: config.diagnostics,
  })
}
