import { randomBytes } from 'node:crypto'
import scalar from '@scalar/fastify-api-reference'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { sendFailure } from './http-status.js'
import { createOpenApiGate, type OpenApiPluginOptions } from './openapi.js'
import { concern } from './concern.js'

/**
 * The page's Content-Security-Policy: scripts only from this server or with this response's nonce,
 * nothing fetched from elsewhere, never framed (clickjacking), no `<base>` or form hijack. Styles
 * stay inline-able: Scalar sets style attributes at run time.
 */
export function referencePolicy(nonce: string): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}'`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ')
}

/**
 * `GET {baseUrl}/reference`: Scalar's API reference with the document embedded in the page (a page
 * behind the discovery secret could not fetch it by URL), its script served from this server, no
 * fonts or proxy from Scalar's hosts. Loaded only when enabled: @scalar/fastify-api-reference is an
 * optional peer dependency.
 *
 * Every decision is by the route the router matched (`request.routeOptions.url`), never by the raw
 * target: `/reference/#.js` routes to the page, not to the script (docs/security.md).
 */
async function serveReference(app: FastifyInstance, options: OpenApiPluginOptions & { path: string }): Promise<void> {
  const gate = createOpenApiGate(options.discovery, options.openapi)
  const page = options.path
  // The route URLs include the prefix the plugin was registered under.
  const pageUrl = `${app.prefix}${page}`
  const pageRoute = `${pageUrl}/`
  const scriptRoute = `${pageUrl}/js/scalar.js`
  // Scalar writes its configuration's nonce into the page; this boot-time stand-in becomes a fresh nonce per response.
  const placeholder = randomBytes(18).toString('base64url')
  const gated = options.discovery.secret !== undefined && !options.openapi.public
  // The page carries the document: behind the secret it is never stored; public, it is revalidated.
  const cacheControl = gated ? 'no-store' : 'no-cache'

  function onRequest(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
    const route = request.routeOptions.url
    reply.header('x-content-type-options', 'nosniff')
    // The script is public, like any bundle: only the page and the document carry the actions.
    if (route === scriptRoute) return done()
    const refused = gate(request)
    if (refused) return void sendFailure(reply, refused)
    reply.header('cache-control', cacheControl)
    // The page's URL may carry the secret: no Referer sends it anywhere.
    reply.header('referrer-policy', 'no-referrer')
    // Scalar's own redirect to `{page}/` drops the query, and with it a secret given there.
    if (route === pageUrl) {
      const query = request.url.indexOf('?')
      return void reply.redirect(`${pageRoute}${query === -1 ? '' : request.url.slice(query)}`, 302)
    }
    done()
  }

  // The page's answer: the stand-in nonce replaced by one of its own, announced in the policy.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.routeOptions.url !== pageRoute || typeof payload !== 'string' || !payload.includes(placeholder)) return done(null, payload)
    const nonce = randomBytes(16).toString('base64')
    reply.header('content-security-policy', referencePolicy(nonce))
    done(null, payload.replaceAll(placeholder, nonce))
  })

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
      nonce: placeholder,
    } as never,
    hooks: { onRequest },
  })
}

/** The API reference page as the plugin `fastify-actions-reference`; it shows the document `fastify-actions-openapi` serves. */
export const referencePlugin = concern('reference', serveReference, { encapsulate: true, dependencies: ['openapi'] })
