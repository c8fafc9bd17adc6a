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
