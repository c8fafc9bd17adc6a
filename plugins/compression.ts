import compress from '@fastify/compress'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ResolvedCompression } from './compression-config.js'

/**
 * What is compressed: @fastify/compress's own list (text, JSON, XML) plus JavaScript (the reference
 * page's bundle). Never `text/event-stream`: an event must reach the client when written, and a
 * compressor holds it back until its block fills.
 */
const COMPRESSIBLE = /^text\/(?!event-stream)|(?:\+|\/)json(?:;|$)|(?:\+|\/)text(?:;|$)|(?:\+|\/)xml(?:;|$)|^application\/javascript(?:;|$)/

/**
 * Response compression (`rest.compression`) on the routes of `app`'s context only: the endpoint and
 * per-action routes, the OpenAPI document, the reference page. Static files keep @fastify/static's
 * own answers (their ETag names the raw bytes), and the host's routes are the host's. Request bodies
 * are decoded by plugins/content-encoding.ts, never by @fastify/compress. An app that registered
 * @fastify/compress above this context already compresses these routes with its own settings.
 */
export async function useCompression(app: FastifyInstance, settings: ResolvedCompression | undefined): Promise<void> {
  if (!settings || app.hasReplyDecorator('compress')) return
  await app.register(compress, {
    globalCompression: true,
    globalDecompression: false,
    threshold: settings.threshold,
    encodings: [...settings.encodings],
    customTypes: COMPRESSIBLE,
  })
  // A GET answer with a strong ETag (the document, the page, the script), once compressed, is other
  // bytes: its tag names the coding too (RFC 9110 8.8.3), as Apache's `"…-gzip"` does.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    if (!methods.includes('GET')) return
    const onSend = route.onSend
    route.onSend = [...(onSend === undefined ? [] : Array.isArray(onSend) ? onSend : [onSend]), tagCoding]
  })
}

function tagCoding(_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void): void {
  const coding = reply.getHeader('content-encoding')
  const etag = reply.getHeader('etag')
  if (typeof coding === 'string' && coding !== 'identity' && typeof etag === 'string' && etag.startsWith('"')) reply.header('etag', `${etag.slice(0, -1)}-${coding}"`)
  done(null, payload)
}
