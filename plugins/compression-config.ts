/** `rest.compression`, the compression hook's options (plugins/compression.ts): their types, keys and resolver; the defaults are `rest.compression*` of plugins/rest-config.ts. */
import { configError } from '../lib/config.js'
import type { KeyTable } from '../lib/config-keys.js'
import { REST_DEFAULTS } from './rest-config.js'

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

/** The keys `rest.compression` accepts (lib/config-keys.ts refuses any other). */
export const COMPRESSION_KEYS = Object.freeze({ threshold: true, encodings: true } satisfies KeyTable<CompressionConfig>)

const CODINGS = new Set(['br', 'gzip', 'deflate'])

/** `rest.compression`: `true` or absent for the defaults, `false` for none. */
export function resolveCompression(config: boolean | CompressionConfig | undefined): ResolvedCompression | undefined {
  if (config === false) return undefined
  if (config !== undefined && config !== true && (typeof config !== 'object' || config === null)) throw configError('rest.compression', 'must be a boolean or { threshold, encodings }', config)
  const given = typeof config === 'object' ? config : {}
  const threshold = given.threshold ?? REST_DEFAULTS.compressionThreshold
  if (!Number.isInteger(threshold) || threshold < 0) throw configError('rest.compression.threshold', 'must be an integer of 0 or more (bytes)', threshold)
  const encodings = given.encodings ?? REST_DEFAULTS.compressionEncodings
  if (!Array.isArray(encodings) || encodings.length === 0 || !encodings.every((coding) => CODINGS.has(coding))) {
    throw configError('rest.compression.encodings', "must be a non-empty list of 'br', 'gzip', 'deflate'", encodings)
  }
  return Object.freeze({ threshold, encodings: Object.freeze([...encodings]) })
}
