/** The SSE adapter's defaults (`rest.streams`, docs/streaming.md). */
export const STREAM_DEFAULTS = Object.freeze({
  /** A `: keep-alive` comment on a stream silent this long (ms), so proxies keep it open. */
  keepAlive: 15_000,
  /** Longest life of one stream (ms); it then ends with an `FA_ERR_STREAM_DURATION` error event. */
  maxDuration: 3_600_000,
  /** Open streams per client key at once (the rate limiter's key; only with `rest.rateLimiting`). */
  maxPerClient: 32,
  /** How long (ms) a stream's final event may take to reach the client; a socket that does not take it is destroyed. */
  endTimeout: 5_000,
} as const)
