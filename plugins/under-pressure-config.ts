/** `rest.underPressure`, load shedding's options (plugins/under-pressure.ts): their type, defaults, keys and resolver. */
import { configError, positiveInteger } from '../lib/config.js'
import type { KeyTable } from '../lib/config-keys.js'

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

/** UnderPressureConfig with every default applied. */
export type ResolvedUnderPressure = Readonly<Required<UnderPressureConfig>>

/** The keys `rest.underPressure` accepts (lib/config-keys.ts refuses any other). */
export const UNDER_PRESSURE_KEYS = Object.freeze({
  maxEventLoopDelay: true,
  maxEventLoopUtilization: true,
  maxHeapUsedBytes: true,
  maxRssBytes: true,
  retryAfter: true,
  sampleInterval: true,
} satisfies KeyTable<UnderPressureConfig>)

/** Load shedding's defaults (`rest.underPressure: true`: these thresholds; off unless asked for). */
export const UNDER_PRESSURE_DEFAULTS = Object.freeze({
  maxEventLoopDelay: 1000,
  maxEventLoopUtilization: 0.98,
  maxHeapUsedBytes: 0,
  maxRssBytes: 0,
  retryAfter: 10,
  sampleInterval: 1000,
} as const)

function nonNegative(field: string, value: unknown, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > max) {
    throw configError(field, max === 1 ? 'must be a number from 0 to 1' : 'must be a non-negative number', value)
  }
  return value
}

/** Checks and completes `rest.underPressure` once, at boot: `true` is the defaults, absent or `false` is off (undefined). */
export function resolveUnderPressure(config: boolean | UnderPressureConfig | undefined): ResolvedUnderPressure | undefined {
  if (config === undefined || config === false) return undefined
  if (config !== true && (typeof config !== 'object' || config === null)) throw configError('rest.underPressure', 'must be a boolean or an object of thresholds', config)
  const given: UnderPressureConfig = config === true ? {} : config
  const d = UNDER_PRESSURE_DEFAULTS
  return Object.freeze({
    maxEventLoopDelay: nonNegative('rest.underPressure.maxEventLoopDelay', given.maxEventLoopDelay, d.maxEventLoopDelay),
    maxEventLoopUtilization: nonNegative('rest.underPressure.maxEventLoopUtilization', given.maxEventLoopUtilization, d.maxEventLoopUtilization, 1),
    maxHeapUsedBytes: nonNegative('rest.underPressure.maxHeapUsedBytes', given.maxHeapUsedBytes, d.maxHeapUsedBytes),
    maxRssBytes: nonNegative('rest.underPressure.maxRssBytes', given.maxRssBytes, d.maxRssBytes),
    retryAfter: positiveInteger('rest.underPressure.retryAfter', given.retryAfter, d.retryAfter),
    sampleInterval: positiveInteger('rest.underPressure.sampleInterval', given.sampleInterval, d.sampleInterval),
  })
}
