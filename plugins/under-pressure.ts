import underPressure from '@fastify/under-pressure'
import type { FastifyInstance } from 'fastify'
import { fail } from '../lib/errors.js'
import type { ResolvedUnderPressure } from './under-pressure-config.js'
import { FailureError } from './wire.js'
import { concern } from './concern.js'

/** What @fastify/under-pressure throws under pressure: the error handler answers the 503 envelope. */
class UnderPressure extends FailureError {
  constructor() {
    super(fail.underPressure())
  }
}

/** Whether `app` is shedding load right now; undefined when load shedding is off. */
export type PressureProbe = () => boolean

/**
 * Load shedding with @fastify/under-pressure, one root `onRequest` hook: under event-loop or memory
 * pressure every request answers 503 `Service under pressure, retry later` with `Retry-After`
 * instead of queueing without bound. A route opts out with `config: { pressureHandler: () => {} }`
 * (the status route does, so it can report the pressure).
 */
export async function setupUnderPressure(app: FastifyInstance, options: ResolvedUnderPressure): Promise<PressureProbe> {
  await app.register(underPressure, {
    maxEventLoopDelay: options.maxEventLoopDelay,
    maxEventLoopUtilization: options.maxEventLoopUtilization,
    // Utilization over the last sample, not since the process started.
    eventLoopUtilizationMode: 'interval',
    maxHeapUsedBytes: options.maxHeapUsedBytes,
    maxRssBytes: options.maxRssBytes,
    retryAfter: options.retryAfter,
    sampleInterval: options.sampleInterval,
    customError: UnderPressure,
  })
  return () => app.isUnderPressure()
}

/** Load shedding as the plugin `fastify-actions-load-shedding`; `expose` receives the pressure probe for the status route. */
export const loadSheddingPlugin = concern('load-shedding', async (app, { expose, ...options }: ResolvedUnderPressure & { expose: (probe: PressureProbe) => void }) =>
  expose(await setupUnderPressure(app, options)),
)
