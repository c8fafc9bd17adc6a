import fastifyRateLimit, { type RateLimitPluginOptions as LimiterOptions } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { errorMessage, type Diagnostics } from '../lib/diagnostics.js'
import { fail } from '../lib/errors.js'
import { messages } from '../lib/messages.js'
import type { ResolvedRateLimit } from './rate-limit-config.js'
import { FailureError } from './wire.js'
import { concern } from './concern.js'
import { clientKeyOf } from './client-key.js'

export { UNKNOWN_CLIENT } from './client-key.js'

export interface RateLimitOptions {
  config: ResolvedRateLimit
  /** Already scoped by `rateLimiting.diagnostics`. */
  diagnostics: Diagnostics
}

/** The limiting header, else `request.ip` (forwarded only from a trusted proxy), else `unknown-client`. */
function createKeyGenerator(header: string, diagnostics: Diagnostics) {
  const fallback = (key: string) => diagnostics.info('rateLimit.key', messages.rateLimitKeyFallback(header, key))
  return (request: FastifyRequest): string => clientKeyOf(request, header, fallback)
}

const draftHeadersOff = { 'ratelimit-limit': false, 'ratelimit-remaining': false, 'ratelimit-reset': false } as const

/**
 * @fastify/rate-limit, applied as one `onRequest` hook on `app`: the plugin's `global` mode attaches
 * per route at registration and would miss the 404 handler and routes added later. A route with its
 * own `config.rateLimit` (an object, or `false` to opt out) is left to the plugin.
 * A failing store (Redis down) lets requests through. That is what the plugin's `skipOnError` does,
 * but silently; this hook does the same and says so once per outage (test/faults.test.ts).
 */
export async function setupRateLimit(app: FastifyInstance, { config, diagnostics }: RateLimitOptions): Promise<void> {
  const options: LimiterOptions = {
    global: false,
    max: config.limit,
    timeWindow: config.windowMs,
    enableDraftSpec: true,
    keyGenerator: createKeyGenerator(config.limitingHeader, diagnostics),
    errorResponseBuilder: (_request, context) => new FailureError(fail.rateLimited(Math.ceil(context.ttl / 1000))),
  }
  if (!config.standardHeaders) {
    options.addHeadersOnExceeding = draftHeadersOff
    options.addHeaders = { ...draftHeadersOff, 'retry-after': false }
  }
  // The structural store type of plugins/rate-limit-config.ts is the plugin's own contract, written out.
  if (config.store) options.store = config.store as unknown as NonNullable<LimiterOptions['store']>
  else if (config.redis) options.redis = config.redis
  // The in-memory store is an LRU of `cache` keys (5,000 by default in the plugin): a window with more
  // distinct keys would forget the oldest counts, so an attacker rotating keys could reset anyone's.
  else options.cache = config.cacheSize
  await app.register(fastifyRateLimit, options)

  const limit = app.rateLimit()
  // The in-memory store answers at once: only a store across a network is raced.
  const storeTimeout = config.redis || config.store ? config.storeTimeoutMs : undefined
  let storeDown = false
  app.addHook('onRequest', async function limitRequest(request, reply) {
    if (request.routeOptions.config?.rateLimit != null) return
    try {
      const pending = limit.call(this, request, reply)
      await (storeTimeout === undefined ? pending : withStoreTimeout(pending, storeTimeout))
    } catch (error) {
      if (error instanceof FailureError) throw error
      if (!storeDown) diagnostics.error('rateLimit.store', messages.rateLimitStoreDown(errorMessage(error)))
      storeDown = true
      return
    }
    if (storeDown) {
      storeDown = false
      diagnostics.info('rateLimit.store', messages.rateLimitStoreUp)
    }
  })
}

class StoreTimeout extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms}ms (rest.rateLimiting.storeTimeoutMs)`)
  }
}

/**
 * The limiter's store call raced against `ms`: a stalled store (a SIGSTOPped Redis, a full network
 * buffer) must not hold the request. A late answer is dropped: the request was already let through.
 */
function withStoreTimeout(pending: unknown, ms: number): Promise<unknown> {
  const call = Promise.resolve(pending)
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new StoreTimeout(ms)), ms)
  })
  call.catch(() => {})
  return Promise.race([call, deadline]).finally(() => clearTimeout(timer))
}

/** Rate limiting as the plugin `fastify-actions-rate-limit`. */
export const rateLimitPlugin = concern('rate-limit', setupRateLimit)
