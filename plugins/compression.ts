import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify'
import { promisify } from 'node:util'
import { brotliCompress, brotliCompressSync, constants, deflate, deflateSync, gzip, gzipSync } from 'node:zlib'
import { toJson } from '../lib/envelope.js'
import type { ResolvedCompression } from './compression-config.js'

/**
 * What is compressed: text, JSON, XML and JavaScript (the reference page's bundle). Never
 * `text/event-stream`: an event must reach the client when written, and a compressor holds it back
 * until its block fills.
 */
const COMPRESSIBLE = /^text\/(?!event-stream)|(?:\+|\/)json(?:;|$)|(?:\+|\/)text(?:;|$)|(?:\+|\/)xml(?:;|$)|^application\/javascript(?:;|$)/

type Coding = ResolvedCompression['encodings'][number]

/** Brotli at quality 4 (as @fastify/compress): 11, zlib's default, costs many times the CPU for a few % less. */
const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } }
const compressSync: Record<Coding, (bytes: Buffer) => Buffer> = {
  br: (bytes) => brotliCompressSync(bytes, BROTLI),
  gzip: (bytes) => gzipSync(bytes),
  deflate: (bytes) => deflateSync(bytes),
}
const brotliAsync = promisify(brotliCompress)
const gzipAsync = promisify(gzip)
const deflateAsync = promisify(deflate)
/** Larger answers are compressed on libuv's thread pool: the event loop keeps serving meanwhile. */
const compressAsync: Record<Coding, (bytes: Buffer) => Promise<Buffer>> = {
  br: (bytes) => brotliAsync(bytes, BROTLI),
  gzip: (bytes) => gzipAsync(bytes),
  deflate: (bytes) => deflateAsync(bytes),
}
/** Up to this many bytes an answer is compressed inline (well under a millisecond). */
const SYNC_LIMIT = 64 * 1024

/**
 * The coding to answer with: among the server's (in its order of preference), the one the client
 * weighs highest (`q`), none when it accepts none of them (RFC 9110 12.5.3; `*` stands for any coding
 * it does not name, `x-gzip` for gzip).
 */
export function negotiateCoding(header: string, encodings: readonly Coding[]): Coding | undefined {
  let best: Coding | undefined
  let bestWeight = 0
  let bestRank = encodings.length
  let any: number | undefined
  const named = new Map<string, number>()
  for (const part of header.toLowerCase().split(',')) {
    const [rawName, ...params] = part.split(';')
    let name = rawName!.trim()
    if (name === 'x-gzip') name = 'gzip'
    let weight = 1
    for (const param of params) {
      const [key, value] = param.split('=')
      if (key!.trim() === 'q') weight = Number(value) || 0
    }
    if (name === '*') any = weight
    else named.set(name, Math.max(weight, named.get(name) ?? 0))
  }
  encodings.forEach((coding, rank) => {
    const weight = named.get(coding) ?? any ?? 0
    if (weight > bestWeight || (weight === bestWeight && weight > 0 && rank < bestRank)) {
      best = coding
      bestWeight = weight
      bestRank = rank
    }
  })
  return best
}

/** `Vary: Accept-Encoding` (RFC 9110 12.5.5) on every answer of a compressible route, compressed or not. */
function varyOnCoding(reply: FastifyReply): void {
  const vary = reply.getHeader('vary')
  if (vary === undefined) reply.header('vary', 'Accept-Encoding')
  else if (!/accept-encoding|\*/i.test(String(vary))) reply.header('vary', `${String(vary)}, Accept-Encoding`)
}

/** The coding of an answer of `length` bytes to `request`, or none (no Accept-Encoding, under the threshold, not accepted). */
function codingFor(request: FastifyRequest, settings: ResolvedCompression, length: number): Coding | undefined {
  const accepted = request.headers['accept-encoding']
  if (accepted === undefined || length < settings.threshold || request.headers['x-no-compression'] !== undefined) return undefined
  return negotiateCoding(accepted, settings.encodings)
}

/** `bytes` in `coding`: inline when small, on the thread pool when large. */
function encode(coding: Coding, bytes: Buffer): Buffer | Promise<Buffer> {
  return bytes.length <= SYNC_LIMIT ? compressSync[coding](bytes) : compressAsync[coding](bytes)
}

/** The answer's bytes in `coding`, with its headers (the length is the coded one). */
function coded(reply: FastifyReply, coding: Coding, bytes: Buffer | Promise<Buffer>): Buffer | Promise<Buffer> {
  reply.header('content-encoding', coding)
  if (bytes instanceof Promise) return bytes.then((done) => (reply.header('content-length', done.length), done))
  reply.header('content-length', bytes.length)
  return bytes
}

/** The byte length of `text`, counted only when its UTF-16 length leaves it in doubt against `threshold`. */
const lengthOf = (text: string, threshold: number): number => (text.length >= threshold || text.length * 3 < threshold ? text.length : Buffer.byteLength(text))

/**
 * The answers of a handler that answers by returning (the endpoint's, the per-action routes', the
 * uploads'), compressed in its own path: no onSend hook, so a route keeps Fastify's hook-free send.
 * A client without Accept-Encoding costs one header (`Vary`); an answer under the threshold is the
 * text Fastify would have serialized anyway. A reply the handler sent itself (a stream) is left alone.
 */
export function compressedAnswers<H extends RouteHandlerMethod>(settings: ResolvedCompression | undefined, handler: H): H {
  if (!settings) return handler
  const answer = (request: FastifyRequest, reply: FastifyReply, value: unknown): unknown => {
    if (value === reply || value === undefined || reply.sent) return value
    varyOnCoding(reply)
    if (request.headers['accept-encoding'] === undefined) return value
    let text: string
    if (typeof value === 'string') text = value
    else {
      text = toJson(value) ?? 'null'
      reply.type('application/json; charset=utf-8')
    }
    const coding = codingFor(request, settings, lengthOf(text, settings.threshold))
    return coding === undefined ? text : coded(reply, coding, encode(coding, Buffer.from(text)))
  }
  return function compressing(this: unknown, request: FastifyRequest, reply: FastifyReply) {
    const value: unknown = (handler as (this: unknown, request: FastifyRequest, reply: FastifyReply) => unknown).call(this, request, reply)
    return value instanceof Promise ? value.then((resolved) => answer(request, reply, resolved)) : answer(request, reply, value)
  } as H
}

/** Compressed bytes of the answers that carry a strong ETag, by tag and coding: the same bytes are coded once. */
const MAX_KEPT = 32

/**
 * The onSend hook of the GET routes (the document, the page, its script): a compressible answer over
 * the threshold is sent in the coding the client prefers; one with a strong ETag is coded once and
 * kept, and its tag names the coding (RFC 9110 8.8.3), as Apache's `"…-gzip"` does.
 */
function compressOnSend(settings: ResolvedCompression) {
  const kept = new Map<string, Buffer>()
  return function compressGet(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void): void {
    const type = reply.getHeader('content-type')
    if (reply.statusCode === 304 || (typeof type === 'string' && COMPRESSIBLE.test(type))) varyOnCoding(reply)
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return done(null, payload)
    if (typeof type !== 'string' || !COMPRESSIBLE.test(type) || reply.hasHeader('content-encoding') || reply.hasHeader('content-range')) return done(null, payload)
    const coding = codingFor(request, settings, Buffer.byteLength(payload))
    if (coding === undefined) return done(null, payload)
    const etag = reply.getHeader('etag')
    const strong = typeof etag === 'string' && etag.startsWith('"') && reply.statusCode === 200 ? etag : undefined
    const key = strong === undefined ? undefined : `${strong}\n${coding}`
    if (strong !== undefined) reply.header('etag', `${strong.slice(0, -1)}-${coding}"`)
    const hit = key === undefined ? undefined : kept.get(key)
    const bytes = hit ?? encode(coding, Buffer.isBuffer(payload) ? payload : Buffer.from(payload))
    const keep = (done: Buffer) => {
      if (key !== undefined && !kept.has(key)) {
        if (kept.size >= MAX_KEPT) kept.delete(kept.keys().next().value!)
        kept.set(key, done)
      }
      return done
    }
    const sent = coded(reply, coding, bytes instanceof Promise ? bytes.then(keep) : keep(bytes))
    if (sent instanceof Promise) sent.then((result) => done(null, result), (error: Error) => done(error))
    else done(null, sent)
  }
}

/**
 * Response compression (`rest.compression`) on the GET routes of `app`'s context (the OpenAPI
 * document, the reference page and its script); the endpoint's routes compress in their handlers
 * (`compressedAnswers`). Static files keep @fastify/static's own answers (their ETag names the raw
 * bytes), and the host's routes are the host's. Request bodies are decoded by
 * plugins/content-encoding.ts. An app that registered @fastify/compress above this context already
 * compresses these routes with its own settings.
 */
export function useCompression(app: FastifyInstance, settings: ResolvedCompression | undefined): void {
  if (!settings || app.hasReplyDecorator('compress')) return
  const hook = compressOnSend(settings)
  const negotiate = (request: FastifyRequest, _reply: FastifyReply, done: () => void) => {
    compressing.set(request, settings)
    done()
  }
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    if (!methods.includes('GET') && !methods.includes('HEAD')) return
    const onSend = route.onSend
    route.onSend = [...(onSend === undefined ? [] : Array.isArray(onSend) ? onSend : [onSend]), hook]
    const onRequest = route.onRequest
    route.onRequest = [negotiate, ...(onRequest === undefined ? [] : Array.isArray(onRequest) ? onRequest : [onRequest])]
  })
}

/** The settings of the GET requests whose answers are compressed (set by their first onRequest hook). */
const compressing = new WeakMap<FastifyRequest, ResolvedCompression>()

/**
 * The coding a compressed answer to `request` would carry, if its answer is compressed (a GET route
 * of `useCompression` and an `Accept-Encoding` that accepts one): what an ETag naming a coding is
 * checked against (plugins/http-cache.ts).
 */
export function codingOfRequest(request: FastifyRequest): Coding | undefined {
  const settings = compressing.get(request)
  const accepted = request.headers['accept-encoding']
  if (settings === undefined || accepted === undefined || request.headers['x-no-compression'] !== undefined) return undefined
  return negotiateCoding(accepted, settings.encodings)
}

/** The settings the endpoint's handlers compress with: none when off, or when the app brought @fastify/compress. */
export function compressionOf(app: FastifyInstance, settings: ResolvedCompression | undefined): ResolvedCompression | undefined {
  return settings && !app.hasReplyDecorator('compress') ? settings : undefined
}
