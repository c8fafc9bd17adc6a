import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Transform, type Readable } from 'node:stream'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'
import { fail, SUPPORTED_ENCODINGS } from '../lib/errors.js'
import { FailureError } from './wire.js'

const decoders: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
}

/** At most this many codings stacked on one body (`gzip, br`): more is no real client. */
const MAX_CODINGS = 2

/**
 * The decoded body as Fastify reads it: `receivedEncodedLength` is what came off the wire, for its
 * Content-Length check; `halt` stops the decoders (the reader is done with the body).
 */
type DecodedBody = Transform & { receivedEncodedLength: number; halt: () => void }

/** The codings of a `Content-Encoding` header, in the order they were applied, `identity` left out. */
export function codingsOf(header: string): string[] {
  const codings: string[] = []
  for (const raw of header.split(',')) {
    const coding = raw.trim().toLowerCase()
    if (coding !== '' && coding !== 'identity') codings.push(coding)
  }
  return codings
}

/** A coding named in an answer only when it looks like one: the header is the client's text. */
const printable = (coding: string): string => (/^[a-z0-9._+-]{1,32}$/.test(coding) ? coding : '?')

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length']
  return length === undefined ? request.headers['transfer-encoding'] !== undefined : length !== '0'
}

/**
 * Decodes one coding after another (the last applied first) into one stream that fails only with
 * `failure`, counting the wire bytes for Fastify's Content-Length check. Fastify refuses the decoded
 * body at the route's `bodyLimit` (413); the decoders are stopped there too, so a zip bomb costs at
 * most the limit's worth of inflating.
 */
function decode(payload: Readable, codings: string[], limit: number, failure: Error): DecodedBody {
  let produced = 0
  // Counts what it passes on (a `data` listener would set it flowing before Fastify reads it).
  const decoded = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      produced += chunk.length
      if (produced > limit) stop()
      callback(null, chunk)
    },
  }) as DecodedBody
  const chain = [...codings].reverse().map((coding) => decoders[coding]!())
  const stop = () => {
    payload.unpipe()
    for (const decoder of chain) decoder.destroy()
  }
  let stream: Readable = payload
  for (const decoder of chain) {
    decoder.on('error', () => {
      stop()
      decoded.destroy(failure)
    })
    stream = stream.pipe(decoder)
  }
  stream.pipe(decoded)
  decoded.halt = stop
  decoded.receivedEncodedLength = 0
  payload.on('data', (chunk: Buffer) => (decoded.receivedEncodedLength += chunk.length))
  return decoded
}

/** A body that is not what its coding says: the 400 names the coding, not zlib's wording. */
const undecodable = (codings: string[]) => new FailureError(fail.undecodableBody(codings.join(', ')))

/**
 * The `preParsing` hook of the routes that read bodies (the endpoint, the per-action routes, MCP):
 * an encoded body is decoded within the body limit; a coding it cannot decode is a 415 naming the
 * ones it can (and `Accept-Encoding`, RFC 9110 12.5.3); a body that is not what its coding says is a
 * 400. A multipart upload is read from the request's own stream, not from the one handed on here:
 * its reader decodes it (`multipartSource`).
 */
export function decodeRequestBody(request: FastifyRequest, reply: FastifyReply, payload: Readable, done: (error: Error | null, body?: Readable) => void): void {
  const header = request.headers['content-encoding']
  if (header === undefined || !hasBody(request)) return done(null, payload)
  const codings = codingsOf(header)
  if (codings.length === 0) return done(null, payload)
  const unsupported = codings.find((coding) => decoders[coding] === undefined)
  if (unsupported !== undefined || codings.length > MAX_CODINGS) {
    reply.header('accept-encoding', SUPPORTED_ENCODINGS.join(', '))
    return done(new FailureError(fail.unsupportedEncoding(printable(unsupported ?? codings.join(', ')))))
  }
  if (/^multipart\//i.test(request.headers['content-type'] ?? '')) return done(null, payload)
  done(null, decode(payload, codings, request.routeOptions.bodyLimit, undecodable(codings)))
}

/** A multipart body as its parser reads it (a stream with the request's `headers`, as busboy wants), and how to let it go. */
export interface MultipartSource {
  readonly stream: Readable & { headers: FastifyRequest['raw']['headers'] }
  /** Stops decoding: the form was read, or refused. */
  close(): void
}

/**
 * The bytes of a multipart upload: the request's own stream, or that stream decoded when it carries a
 * Content-Encoding (the `preParsing` hook above has refused any coding it cannot decode). The decoded
 * bytes are what the upload limits count, and the decoders stop past `limit`: a zip bomb inflates at
 * most that much. A body that is not what its coding says errors the stream with the 400's FailureError.
 */
export function multipartSource(request: FastifyRequest, limit: number): MultipartSource {
  const raw = request.raw
  const header = request.headers['content-encoding']
  const codings = header === undefined || !hasBody(request) ? [] : codingsOf(header)
  if (codings.length === 0) return { stream: raw, close: () => {} }
  const decoded = Object.assign(decode(raw, codings, limit, undecodable(codings)), { headers: raw.headers })
  return {
    stream: decoded,
    close: () => {
      decoded.halt()
      if (!decoded.destroyed) decoded.destroy()
    },
  }
}

/** Installs `decodeRequestBody` on the routes of `app`'s context. */
export function setupContentEncoding(app: FastifyInstance): void {
  app.addHook('preParsing', decodeRequestBody)
}
