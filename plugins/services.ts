import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { timingSafeEqual } from 'node:crypto'
import type { Engine, Failure } from '../lib/engine.js'
import type { ServerContext } from '../lib/context.js'
import { createDiscovery, type Discovery } from '../lib/discovery.js'
import { failure, statusOf, toExternalResponse } from '../lib/envelope.js'
import { messages } from '../lib/messages.js'
import { checkExternalRequest } from '../lib/request.js'
import type { DiscoveryConfig, ExternalRequest, ExternalResponse } from '../lib/types.js'

/**
 * Reads a multipart request on the services endpoint into an ExternalRequest whose payload is
 * `{ fields, files }` (for explore/schema: the form's `discoverySecret` as `payload.discoverySecret`),
 * or answers a Failure. The uploads plugin provides it; without it multipart is a 415. It gets the reply
 * to manage the connection when it answers before the body was read to its end.
 */
export type MultipartReader = (request: FastifyRequest, reply: FastifyReply) => Promise<ExternalRequest | Failure>

export interface ServicesPluginOptions {
  engine: Engine
  context: ServerContext<any>
  baseUrl: string
  discovery?: DiscoveryConfig
  bodyLimit: number
  /** Sets up multipart parsing inside this plugin's scope and returns its reader. */
  multipart?: (app: FastifyInstance) => Promise<MultipartReader> | MultipartReader
}

function sameSecret(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

function isMultipart(request: FastifyRequest): boolean {
  return request.headers['content-type']?.toLowerCase().startsWith('multipart/form-data') === true
}

function isFailure(value: ExternalRequest | Failure): value is Failure {
  return (value as Failure).ok === false
}

/** `POST {baseUrl}/services`: one endpoint, three intents. */
export async function servicesPlugin(app: FastifyInstance, options: ServicesPluginOptions): Promise<void> {
  const { engine, context, baseUrl } = options
  const discoverySecret = options.discovery?.secret
  // Services are fixed at boot, so every discovery answer is built once, here.
  const discovery: Discovery | undefined = options.discovery?.enabled === true ? createDiscovery(engine) : undefined

  // A browser may send text/plain cross-site without a preflight: never execute it.
  app.removeContentTypeParser('text/plain')
  app.addContentTypeParser(/^application\/[\w.+-]+\+json$/i, { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'))
  const readMultipart = options.multipart ? await options.multipart(app) : undefined

  const send = (reply: FastifyReply, status: number, body: ExternalResponse) => reply.code(status).send(body)

  async function dispatch(reply: FastifyReply, request: ExternalRequest) {
    const { intent, service, action, payload } = request
    if (intent === 'execute') {
      if (service === '*' || action === '*') return send(reply, 400, failure(messages.wildcardExecute(service, action)))
      const result = await engine.executeAction(service, action, payload, context)
      return send(reply, statusOf(result), toExternalResponse(result, service, action))
    }
    if (!discovery) return send(reply, 403, failure(messages.discoveryDisabled))
    if (discoverySecret !== undefined && !sameSecret(payload.discoverySecret, discoverySecret)) {
      return send(reply, 403, failure(messages.discoverySecret))
    }
    const answer = intent === 'explore' ? discovery.explore(service, action) : discovery.schema(service, action)
    if ('ok' in answer) return send(reply, answer.status, failure(answer.error, answer.data))
    return send(reply, 200, answer)
  }

  app.post(`${baseUrl}/services`, { bodyLimit: options.bodyLimit }, async (request, reply) => {
    if (readMultipart && isMultipart(request)) {
      const parsed = await readMultipart(request, reply)
      if (isFailure(parsed)) return send(reply, parsed.status, failure(parsed.error, parsed.data))
      return dispatch(reply, parsed)
    }
    const body = request.body
    if (body === undefined || body === null) return send(reply, 400, failure(messages.invalidBody))
    const errors = checkExternalRequest(body)
    if (errors) return send(reply, 400, failure(messages.invalidRequest, { errors }))
    return dispatch(reply, body as ExternalRequest)
  })
}
