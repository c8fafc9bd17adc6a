import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { createHash } from 'node:crypto'
import { errorEnvelope } from '../lib/envelope.js'
import { fail, type Failure } from '../lib/errors.js'
import type { ResolvedOpenApi } from './config.js'
import { statusOf } from './http-status.js'
import { sameSecret } from './services.js'

export interface OpenApiPluginOptions {
  /** Built once at boot by `buildOpenApiDocument`. */
  document: Record<string, unknown>
  openapi: ResolvedOpenApi
  discovery: { readonly enabled: boolean; readonly secret?: string }
}

/** The request header that carries the discovery secret to the document and the page. */
export const DISCOVERY_SECRET_HEADER = 'x-discovery-secret'
/** The query parameter that carries it instead (a browser opening the page has no header to set). */
export const DISCOVERY_SECRET_QUERY = 'discoverySecret'

/**
 * The gate of the document and the page: the `schema` intent's. Off while discovery is off; with a
 * discovery secret, only for a request that carries it (header or query), unless `public`.
 */
export function createOpenApiGate(discovery: OpenApiPluginOptions['discovery'], openapi: ResolvedOpenApi) {
  const digest = discovery.secret === undefined || openapi.public ? undefined : createHash('sha256').update(discovery.secret).digest()
  return (request: FastifyRequest): Failure | undefined => {
    if (!discovery.enabled) return fail.discoveryDisabled()
    if (!digest) return undefined
    const header = request.headers[DISCOVERY_SECRET_HEADER]
    const query = (request.query as Record<string, unknown> | undefined)?.[DISCOVERY_SECRET_QUERY]
    const given = typeof header === 'string' ? header : query
    return sameSecret(given, digest) ? undefined : fail.discoverySecret()
  }
}

export function sendGateFailure(reply: FastifyReply, failure: Failure): FastifyReply {
  return reply.code(statusOf(failure)).send(errorEnvelope(failure.error, failure.data))
}

/** `GET {baseUrl}/openapi.json`: the document, built once here at boot, behind the discovery gate. */
export async function openApiPlugin(app: FastifyInstance, options: OpenApiPluginOptions): Promise<void> {
  const body = JSON.stringify(options.document)
  const gate = createOpenApiGate(options.discovery, options.openapi)
  app.get(options.openapi.path, (request, reply) => {
    const refused = gate(request)
    if (refused) return sendGateFailure(reply, refused)
    return reply.type('application/json; charset=utf-8').header('cache-control', 'no-store').send(body)
  })
}
