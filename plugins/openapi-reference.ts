import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import scalar from '@scalar/fastify-api-reference'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { sendFailure } from './wire.js'
import { createOpenApiGate, isGated, type OpenApiPluginOptions } from './openapi.js'
import { useCompression } from './compression.js'
import { answerFromCache, contentHash, IMMUTABLE, strongEtag } from './http-cache.js'
import { concern } from './concern.js'

/**
 * The page's Content-Security-Policy: scripts only from this server or the page's own inline
 * start-up script (allowed by its hash, so the page is the same bytes on every response and can carry
 * a strong ETag), nothing fetched from elsewhere, never framed (clickjacking), no `<base>` or form
 * hijack. Styles stay inline-able: Scalar sets style attributes at run time.
 */
export function referencePolicy(scriptHashes: readonly string[]): string {
  return [
    "default-src 'self'",
    ['script-src', "'self'", ...scriptHashes.map((hash) => `'sha256-${hash}'`)].join(' '),
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

/** The page as built once: its bytes, their tag and the policy that allows its inline scripts. */
interface BuiltPage {
  readonly html: string
  readonly etag: string
  readonly policy: string
}

/** The SHA-256 (base64) of every inline `<script>` of a page: what its policy allows. */
function inlineScriptHashes(html: string): string[] {
  const hashes: string[] = []
  for (const match of html.matchAll(/<script\b(?![^>]*\ssrc=)[^>]*>([\s\S]*?)<\/script>/g)) {
    hashes.push(createHash('sha256').update(match[1]!).digest('base64'))
  }
  return hashes
}

/** Scalar's script is embedded in its plugin's module: that file's hash names the script's content. */
function scalarScriptHash(): string {
  return contentHash(readFileSync(fileURLToPath(import.meta.resolve('@scalar/fastify-api-reference'))))
}

/**
 * `GET {baseUrl}/reference`: Scalar's API reference with the document embedded in the page (a page
 * behind the discovery secret could not fetch it by URL), its script served from this server under a
 * content-hashed URL (`js/scalar.js?v=<hash>`, cached for a year as immutable), no fonts or proxy from
 * Scalar's hosts. The page is built on its first request and kept: every later answer is the same
 * bytes with a strong ETag (304 on `If-None-Match`). Loaded only when enabled:
 * @scalar/fastify-api-reference is an optional peer dependency.
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
  const scriptVersion = scalarScriptHash()
  const scriptTag = `"${scriptVersion}"`
  // The page carries the document: behind the secret it is never stored; public, it is revalidated.
  const cacheControl = isGated(options) ? 'no-store' : 'no-cache'
  let built: BuiltPage | undefined

  function onScript(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
    // The script is public, like any bundle: only the page and the document carry the actions.
    const version = (request.query as Record<string, unknown> | undefined)?.v
    reply.header('cache-control', version === scriptVersion ? IMMUTABLE : 'no-cache')
    if (answerFromCache(request, reply, scriptTag)) return
    done()
  }

  function onRequest(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
    const route = request.routeOptions.url
    reply.header('x-content-type-options', 'nosniff')
    if (route === scriptRoute) return onScript(request, reply, done)
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
    if (route !== pageRoute || !built) return done()
    reply.header('content-security-policy', built.policy)
    if (answerFromCache(request, reply, built.etag)) return
    void reply.type('text/html; charset=utf-8').send(built.html)
  }

  // The first answer Scalar renders is kept; its tag and policy go on it and on every later one.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.routeOptions.url !== pageRoute || typeof payload !== 'string' || reply.statusCode !== 200) return done(null, payload)
    if (!built) {
      built = { html: payload, etag: strongEtag(payload), policy: referencePolicy(inlineScriptHashes(payload)) }
    }
    reply.header('content-security-policy', built.policy)
    reply.header('etag', built.etag)
    done(null, payload)
  })

  useCompression(app, options.compression)
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
      // Relative to the page (`{page}/`): the script's URL changes with its content.
      cdn: `js/scalar.js?v=${scriptVersion}`,
    } as never,
    hooks: { onRequest },
  })
}

/** The API reference page as the plugin `fastify-actions-reference`; it shows the document `fastify-actions-openapi` serves. */
export const referencePlugin = concern('reference', serveReference, { encapsulate: true, dependencies: ['openapi'] })
