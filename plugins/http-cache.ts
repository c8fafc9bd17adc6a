import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { codingOfRequest } from './compression.js'

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
 * The tag of `If-None-Match` that names this representation, or undefined (RFC 9110 13.1.2: `*`, or a
 * list compared weakly, so a `W/` form matches too). A tag this server gave a compressed answer
 * (`"<tag>-br"`, plugins/compression.ts) names the same representation in that coding: it matches
 * only a request that would get that coding (`coding`), so a cache holding the br answer is never
 * told to hand it to a client that asked for gzip.
 */
export function matchingTag(header: string | string[] | undefined, etag: string, coding?: string): string | undefined {
  if (header === undefined) return undefined
  const value = Array.isArray(header) ? header.join(',') : header
  if (value.trim() === '*') return etag
  const opaque = etag.replace(/^W\//, '')
  for (const raw of value.split(',')) {
    const tag = raw.trim().replace(/^W\//, '')
    if (tag === opaque) return etag
    const coded = CODED.exec(tag)
    if (coded !== null && coded[2] === coding && `${coded[1]}"` === opaque) return tag
  }
  return undefined
}

/** A tag with its coding: the tag before it, and the coding. */
const CODED = /^(.*)-(gzip|br|deflate)"$/

/** Whether `If-None-Match` names this tag (see `matchingTag`). */
export function matchesIfNoneMatch(header: string | string[] | undefined, etag: string, coding?: string): boolean {
  return matchingTag(header, etag, coding) !== undefined
}

/**
 * Sets the tag and answers `304 Not Modified` (no body) when the request already holds it.
 * Returns true when it answered: the caller sends nothing more.
 */
export function answerFromCache(request: FastifyRequest, reply: FastifyReply, etag: string): boolean {
  reply.header('etag', etag)
  if (request.method !== 'GET' && request.method !== 'HEAD') return false
  const matched = matchingTag(request.headers['if-none-match'], etag, codingOfRequest(request))
  if (matched === undefined) return false
  // The 304 names what the client holds (a compressed answer's tag names its coding).
  reply.header('etag', matched).code(304).send()
  return true
}
