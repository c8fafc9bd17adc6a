import fp from 'fastify-plugin'
import fastifyRateLimit, { type RateLimitPluginOptions as LimiterOptions } from '@fastify/rate-limit'
import type { FastifyRequest } from 'fastify'
import { errorMessage, scopedDiagnostics, type Diagnostics } from '../lib/diagnostics.js'
import { messages } from '../lib/messages.js'
import type { RateLimitConfig, ServiceLogger } from '../lib/types.js'

export const RATE_LIMIT_DEFAULTS = {
  windowMs: 900_000,
  limit: 100,
  standardHeaders: true,
} as const

/** The key of every request that carries none of the key headers. */
export const UNKNOWN_CLIENT = 'unknown-client'

export interface RateLimitPluginOptions {
  config: RateLimitConfig
  /** The server's diagnostics (on with `config.diagnostics`). */
  diagnostics: Diagnostics
  /** `resources.logger`, for `rateLimiting.diagnostics` when the server's diagnostics are off. */
  logger?: ServiceLogger
}

/** Thrown by the limiter for a client over its limit; the root error handler turns it into the 429 envelope. */
export class RateLimitExceeded extends Error {
  readonly statusCode = 429
  constructor(readonly retryAfterSeconds: number) {
    super(messages.rateLimited(retryAfterSeconds))
  }
}

function headerValue(request: FastifyRequest, name: string): string | undefined {
  const raw = request.headers[name]
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim()
  return value === '' ? undefined : value
}

/** The limiting header, else the first hop of `x-forwarded-for`, else `x-real-ip`, else `unknown-client`. */
function createKeyGenerator(limitingHeader: string, diagnostics: Diagnostics) {
  const header = limitingHeader.toLowerCase()
  return (request: FastifyRequest): string => {
    const own = headerValue(request, header)
    if (own !== undefined) return own
    const key = headerValue(request, 'x-forwarded-for')?.split(',')[0].trim() || headerValue(request, 'x-real-ip') || UNKNOWN_CLIENT
    diagnostics.info('rateLimit.key', messages.rateLimitKeyFallback(header, key))
    return key
  }
}

const draftHeadersOff = { 'ratelimit-limit': false, 'ratelimit-remaining': false, 'ratelimit-reset': false } as const

/**
 * @fastify/rate-limit, applied as one root `onRequest` hook: the plugin's `global` mode attaches per
 * route at registration and would miss the 404 handler and routes added later on `server.rest.app`.
 * A route with its own `config.rateLimit` (an object, or `false` to opt out) is left to the plugin.
 * A failing store (Redis down) lets requests through, as the plugin's `skipOnError` does, and says so
 * once per outage through diagnostics.
 */
export const rateLimitPlugin = fp<RateLimitPluginOptions>(
  async function rateLimit(app, { config, diagnostics, logger }) {
    const log = scopedDiagnostics(config.diagnostics, diagnostics, logger)
    const standardHeaders = config.standardHeaders ?? RATE_LIMIT_DEFAULTS.standardHeaders
    const options: LimiterOptions = {
      global: false,
      max: config.limit ?? RATE_LIMIT_DEFAULTS.limit,
      timeWindow: config.windowMs ?? RATE_LIMIT_DEFAULTS.windowMs,
      enableDraftSpec: true,
      keyGenerator: createKeyGenerator(config.limitingHeader, log),
      errorResponseBuilder: (_request, context) => new RateLimitExceeded(Math.ceil(context.ttl / 1000)),
    }
    if (!standardHeaders) {
      options.addHeadersOnExceeding = draftHeadersOff
      options.addHeaders = { ...draftHeadersOff, 'retry-after': false }
    }
    if (config.store) options.store = config.store
    else if (config.redis) options.redis = config.redis
    await app.register(fastifyRateLimit, options)

    const limit = app.rateLimit()
    let storeDown = false
    app.addHook('onRequest', async function limitRequest(request, reply) {
      if (request.routeOptions.config?.rateLimit != null) return
      try {
        await limit.call(this, request, reply)
      } catch (error) {
        if (error instanceof RateLimitExceeded) throw error
        if (!storeDown) log.error('rateLimit.store', messages.rateLimitStoreDown(errorMessage(error)))
        storeDown = true
        return
      }
      if (storeDown) {
        storeDown = false
        log.info('rateLimit.store', messages.rateLimitStoreUp)
      }
    })
  },
  { name: 'fastify-actions-rate-limit', fastify: '5.x' },
)
