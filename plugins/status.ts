import type { FastifyInstance } from 'fastify'
import { success } from '../lib/envelope.js'
import { messages } from '../lib/messages.js'

/** `GET /status`, not under the base URL. */
export async function statusPlugin(app: FastifyInstance, { serverName }: { serverName: string }): Promise<void> {
  const body = success(messages.running(serverName))
  app.get('/status', async (_request, reply) => reply.send(body))
}
