/** Load shedding's defaults (`rest.underPressure: true`: these thresholds; off unless asked for). */
export const UNDER_PRESSURE_DEFAULTS = Object.freeze({
  maxEventLoopDelay: 1000,
  maxEventLoopUtilization: 0.98,
  maxHeapUsedBytes: 0,
  maxRssBytes: 0,
  retryAfter: 10,
  sampleInterval: 1000,
} as const)
