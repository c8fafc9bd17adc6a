import scalar from '@scalar/fastify-api-reference'
import type { FastifyInstance } from 'fastify'
import { sendFailure } from './http-status.js'
import { createOpenApiGate, type OpenApiPluginOptions } from './openapi.js'
import { concern } from './concern.js'

/**
 * `GET {baseUrl}/reference`: Scalar's API reference with the document embedded in the page (a page
 * behind the discovery secret could not fetch it by URL), its script served from this server, no
 * fonts or proxy from Scalar's hosts. Loaded only when enabled: @scalar/fastify-api-reference is an
 * optional peer dependency.
 */
async function serveReference(app: FastifyInstance, options: OpenApiPluginOptions & { path: string }): Promise<void> {
  const gate = createOpenApiGate(options.discovery, options.openapi)
  const page = options.path
  // The URL a request carries includes the prefix the plugin was registered under.
  const pageUrl = `${app.prefix}${page}`
  await app.register(scalar, {
    routePrefix: page as `/${string}`,
    logLevel: 'warn',
    configuration: {
      // `sources` with content: the page carries the document itself (with `content` the plugin would link it by URL).
      sources: [{ content: options.document, title: options.openapi.info.title }],
      withDefaultFonts: false,
      proxyUrl: undefined,
      telemetry: false,
      // Every visible action listed at once (Scalar folds all tags but the first otherwise).
      defaultOpenAllTags: true,
      hideClientButton: false,
    } as never,
    hooks: {
      onRequest(request, reply, done) {
        const path = request.url.split('?', 1)[0]
        // The script is public, like any bundle: only the page carries the document.
        if (path.endsWith('.js')) return done()
        const refused = gate(request)
        if (refused) return void sendFailure(reply, refused)
        // Scalar's own redirect to `{page}/` drops the query, and with it a secret given there.
        if (path === pageUrl) {
          const query = request.url.slice(path.length)
          return void reply.redirect(`${pageUrl}/${query}`, 302)
        }
        done()
      },
    },
  })
}

/** The API reference page as the plugin `fastify-actions-reference`; it shows the document `fastify-actions-openapi` serves. */
export const referencePlugin = concern('reference', serveReference, { encapsulate: true, dependencies: ['openapi'] })
