import type { FastifyInstance } from 'fastify'
import { success } from '../lib/envelope.js'
import { messages } from '../lib/messages.js'
import type { PressureProbe } from './under-pressure.js'
import { concern } from './concern.js'

/** Route options that exempt a route from load shedding (under-pressure calls it, then goes on). */
const notShed = { config: { pressureHandler: () => undefined } } as const

export interface StatusPluginOptions {
  serverName: string
  /** Present when load shedding is on: `/status` then reports it in `data.underPressure`. */
  underPressure?: PressureProbe
}

/**
 * `GET /status`, not under the base URL. Its answer is the specification's
 * (`data: {}`) unless load shedding is on; then `data: { underPressure }`, and it is never shed.
 */
async function serveStatus(app: FastifyInstance, { serverName, underPressure }: StatusPluginOptions): Promise<void> {
  const message = messages.running(serverName)
  if (!underPressure) {
    const body = success(message)
    app.get('/status', async (_request, reply) => reply.send(body))
    return
  }
  app.get('/status', notShed, async (_request, reply) => reply.send(success(message, { underPressure: underPressure() })))
}

/** `GET /status` as the plugin `fastify-actions-status`. */
export const statusPlugin = concern('status', serveStatus, { encapsulate: true })
