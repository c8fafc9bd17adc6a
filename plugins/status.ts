import type { FastifyInstance } from 'fastify'
import { success } from '../lib/envelope.js'
import { messages } from '../lib/messages.js'
import type { PressureProbe } from './under-pressure.js'
import { concern } from './concern.js'

/**
 * A load balancer's health check must not be refused for the traffic of others: `/status` is
 * exempt from the app-wide rate limit (its checks carry no client key, so they would all share
 * `unknown-client` and be answered 429 once past the limit) and from load shedding (under-pressure
 * calls `pressureHandler`, then goes on), so it can report the pressure.
 */
const notLimited = { config: { rateLimit: false } } as const
const notShedNorLimited = { config: { rateLimit: false, pressureHandler: () => undefined } } as const

export interface StatusPluginOptions {
  serverName: string
  /** Present when load shedding is on: `/status` then reports it in `data.underPressure`. */
  underPressure?: PressureProbe
}

/**
 * `GET /status`, not under the base URL. Its answer is the specification's
 * (`data: {}`) unless load shedding is on; then `data: { underPressure }`. It is never rate
 * limited nor shed.
 */
async function serveStatus(app: FastifyInstance, { serverName, underPressure }: StatusPluginOptions): Promise<void> {
  const message = messages.running(serverName)
  if (!underPressure) {
    const body = success(message)
    app.get('/status', notLimited, async (_request, reply) => reply.send(body))
    return
  }
  app.get('/status', notShedNorLimited, async (_request, reply) => reply.send(success(message, { underPressure: underPressure() })))
}

/** `GET /status` as the plugin `fastify-actions-status`. */
export const statusPlugin = concern('status', serveStatus, { encapsulate: true })
