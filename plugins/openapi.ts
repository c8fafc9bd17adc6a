import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Failure } from '../lib/errors.js'
import type { ResolvedCompression } from './compression-config.js'
import type { ResolvedOpenApi } from './openapi-config.js'
import { useCompression } from './compression.js'
import { createDiscoveryGate } from './discovery-gate.js'
import { sendFailure } from './wire.js'
import { concern } from './concern.js'
import { answerFromCache, strongEtag } from './http-cache.js'

export interface OpenApiPluginOptions {
  /** Built once at boot by `buildOpenApiDocument`. */
  document: Record<string, unknown>
  openapi: ResolvedOpenApi
  discovery: { readonly enabled: boolean; readonly secret?: string }
  /** `rest.compression`: absent for none. */
  compression?: ResolvedCompression
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
  const gate = createDiscoveryGate({ enabled: discovery.enabled, secret: openapi.public ? undefined : discovery.secret })
  return (request: FastifyRequest): Failure | undefined => {
    const header = request.headers[DISCOVERY_SECRET_HEADER]
    const query = (request.query as Record<string, unknown> | undefined)?.[DISCOVERY_SECRET_QUERY]
    return gate(typeof header === 'string' ? header : query)
  }
}

/** Whether the document and the page are behind the discovery secret (then never stored by a cache). */
export function isGated(options: Pick<OpenApiPluginOptions, 'discovery' | 'openapi'>): boolean {
  return options.discovery.secret !== undefined && !options.openapi.public
}

/**
 * `GET {baseUrl}/openapi.json`: the document, serialized once here at boot, behind the discovery gate,
 * with a strong ETag (304 on `If-None-Match`): behind the secret never stored, public revalidated.
 */
async function serveOpenApi(app: FastifyInstance, options: OpenApiPluginOptions): Promise<void> {
  const body = JSON.stringify(options.document)
  const etag = strongEtag(body)
  const gate = createOpenApiGate(options.discovery, options.openapi)
  const cacheControl = isGated(options) ? 'no-store' : 'no-cache'
  useCompression(app, options.compression)
  app.get(options.openapi.path, (request, reply) => {
    const refused = gate(request)
    if (refused) return sendFailure(reply, refused)
    reply.header('cache-control', cacheControl)
    if (answerFromCache(request, reply, etag)) return reply
    return reply.type('application/json; charset=utf-8').send(body)
  })
}

/** The OpenAPI document as the plugin `fastify-actions-openapi`. */
export const openApiPlugin = concern('openapi', serveOpenApi, { encapsulate: true })
