/** `rest.streams`, the SSE adapter's options (plugins/sse.ts): their type, defaults, keys and resolver. */
import { configError, positiveInteger } from '../lib/config.js'
import type { KeyTable } from '../lib/config-keys.js'

/** `rest.streams`: streaming actions over Server-Sent Events (docs/streaming.md). */
export interface StreamsConfig {
  /** Milliseconds of silence after which a `: keep-alive` comment is sent (default 15000). */
  keepAlive?: number
  /** Longest life of one stream in ms (default 3600000); it then ends with an error event. */
  maxDuration?: number
  /** Open streams per client key at once (default 32); applied with `rest.rateLimiting`, whose key it uses. */
  maxPerClient?: number
  /**
   * Milliseconds the final event (done, error, shutdown, `maxDuration`) may take to be written to the
   * socket (default 5000); a reader that does not take it has its socket destroyed.
   */
  endTimeout?: number
}

export type ResolvedStreams = Readonly<Required<StreamsConfig>>

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

/** The keys `rest.streams` accepts (lib/config-keys.ts refuses any other). */
export const STREAMS_KEYS = Object.freeze({ keepAlive: true, maxDuration: true, maxPerClient: true, endTimeout: true } satisfies KeyTable<StreamsConfig>)

/** Checks and completes `rest.streams` once, at boot. */
export function resolveStreams(config: StreamsConfig | undefined): ResolvedStreams {
  if (config !== undefined && (typeof config !== 'object' || config === null)) throw configError('rest.streams', 'must be an object', config)
  const d = STREAM_DEFAULTS
  return Object.freeze({
    keepAlive: positiveInteger('rest.streams.keepAlive', config?.keepAlive, d.keepAlive),
    maxDuration: positiveInteger('rest.streams.maxDuration', config?.maxDuration, d.maxDuration),
    maxPerClient: positiveInteger('rest.streams.maxPerClient', config?.maxPerClient, d.maxPerClient),
    endTimeout: positiveInteger('rest.streams.endTimeout', config?.endTimeout, d.endTimeout),
  })
}
