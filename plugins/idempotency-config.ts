import { configError, positiveInteger } from '../lib/config.js'
import type { KeyTable } from '../lib/config-keys.js'
import type { IdempotencyRedis, IdempotencyStore } from '../lib/idempotency.js'

/** `rest.idempotency`: where `Idempotency-Key`s live and for how long (docs/idempotency.md). */
export interface IdempotencyConfig {
  /** How long a finished request's answer is replayed, in ms (default 24 h). */
  ttl?: number
  /**
   * How long a running request holds its key, in ms (default 60 s; at least the action's timeout plus
   * a second): the key of a request whose server died is free again after it.
   */
  lease?: number
  /** Longest wait for one store call, in ms (default 2000); past it the request is a 503 and does not run. */
  timeout?: number
  /** Keys the in-memory store remembers (default 100000); the oldest goes first. */
  maxKeys?: number
  /** An ioredis client: keys shared by every instance on the same Redis. */
  redis?: IdempotencyRedis
  /** A store of your own (the `IdempotencyStore` interface); wins over `redis`. */
  store?: IdempotencyStore
}

/** Its keys, for the unknown-key check (REST_KEYS, plugins/config.ts). */
export const IDEMPOTENCY_KEYS: KeyTable<IdempotencyConfig> = Object.freeze({ ttl: true, lease: true, timeout: true, maxKeys: true, redis: true, store: true })

export interface ResolvedIdempotency {
  readonly ttl: number
  readonly lease: number
  readonly timeout: number
  readonly maxKeys: number
  readonly redis?: IdempotencyRedis
  readonly store?: IdempotencyStore
}

function isStore(value: unknown): value is IdempotencyStore {
  const store = value as IdempotencyStore
  return typeof store === 'object' && store !== null && typeof store.acquire === 'function' && typeof store.complete === 'function' && typeof store.release === 'function'
}

/** Checks `rest.idempotency` once, at boot. */
export function resolveIdempotency(config: IdempotencyConfig | undefined): ResolvedIdempotency {
  if (config !== undefined && (typeof config !== 'object' || config === null)) throw configError('rest.idempotency', 'must be an object', config)
  const defaults = IDEMPOTENCY_DEFAULTS
  if (config?.store !== undefined && !isStore(config.store)) throw configError('rest.idempotency.store', 'must have acquire, complete and release methods', config.store)
  const redis = config?.redis as Partial<IdempotencyRedis> | undefined
  if (redis !== undefined && (typeof redis?.set !== 'function' || typeof redis.get !== 'function' || typeof redis.eval !== 'function')) {
    throw configError('rest.idempotency.redis', 'must be an ioredis client', '(not a client)')
  }
  return Object.freeze({
    ttl: positiveInteger('rest.idempotency.ttl', config?.ttl, defaults.ttl),
    lease: positiveInteger('rest.idempotency.lease', config?.lease, defaults.lease),
    timeout: positiveInteger('rest.idempotency.timeout', config?.timeout, defaults.timeout),
    maxKeys: positiveInteger('rest.idempotency.maxKeys', config?.maxKeys, defaults.maxKeys),
    redis: config?.redis,
    store: config?.store,
  })
}

/** `rest.idempotency`'s defaults: Idempotency-Key answers and the store that keeps them (docs/idempotency.md). */
export const IDEMPOTENCY_DEFAULTS = Object.freeze({
  /** How long a finished request's answer is replayed (ms): 24 hours. */
  ttl: 86_400_000,
  /** How long a running request holds its key (ms); at least the action's timeout plus a second. */
  lease: 60_000,
  /** Longest wait for one store call (ms). */
  timeout: 2_000,
  /** Keys the in-memory store holds; the oldest goes first. */
  maxKeys: 100_000,
} as const)
