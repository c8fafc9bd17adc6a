import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'

/** The long-lived policy of a URL that names its content's hash: it never changes, so it is never revalidated. */
export const IMMUTABLE = 'public, max-age=31536000, immutable'

/** A short hash of bytes (base64url of SHA-256, 22 characters): for an ETag or a content-addressed URL. */
export function contentHash(bytes: string | Uint8Array): string {
  return createHash('sha256').update(bytes).digest('base64url').slice(0, 22)
}

/** A strong entity tag (RFC 9110 8.8.3) for a representation built once: the quoted hash of its bytes. */
export function strongEtag(bytes: string | Uint8Array): string {
  return `"${contentHash(bytes)}"`
}

/**
 * Whether `If-None-Match` names this tag (RFC 9110 13.1.2: `*`, or a list compared weakly, so a
 * `W/` form of the same tag matches too, as a cache that compressed the answer may send it back).
 */
export function matchesIfNoneMatch(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false
  const value = Array.isArray(header) ? header.join(',') : header
  if (value.trim() === '*') return true
  const opaque = etag.replace(/^W\//, '')
  for (const raw of value.split(',')) {
    const tag = raw.trim().replace(/^W\//, '')
    // @fastify/compress-style suffixes (`"x-gzip"`, `"x-br"`) name the same representation before encoding.
    if (tag === opaque || tag.replace(/-(gzip|br|deflate)"$/, '"') === opaque) return true
  }
  return false
}

/**
 * Sets the tag and answers `304 Not Modified` (no body) when the request already holds it.
 * Returns true when it answered: the caller sends nothing more.
 */
export function answerFromCache(request: FastifyRequest, reply: FastifyReply, etag: string): boolean {
  reply.header('etag', etag)
  if (request.method !== 'GET' && request.method !== 'HEAD') return false
  if (!matchesIfNoneMatch(request.headers['if-none-match'], etag)) return false
  reply.code(304).send()
  return true
}
