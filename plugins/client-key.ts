import type { FastifyRequest } from 'fastify'

/** The key of a request that carries no limiting header and has no address (an in-process call without one). */
export const UNKNOWN_CLIENT = 'unknown-client'

function headerValue(request: FastifyRequest, name: string): string | undefined {
  const raw = request.headers[name]
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim()
  return value === '' ? undefined : value
}

/**
 * The client key (rate limits, stream slots): the limiting header, else `request.ip`, else
 * `unknown-client`. `request.ip` is Fastify's: the socket's peer, or the address a proxy wrote in
 * `X-Forwarded-For` only when that peer is trusted under `trustProxy`. A departure from the
 * specification's chain (which read `x-forwarded-for` and `x-real-ip` from anyone, and shared one
 * key among every header-less client): docs/security.md says why. `fallback` hears the key used
 * when there was no limiting header.
 */
export function clientKeyOf(request: FastifyRequest, header: string, fallback?: (key: string) => void): string {
  const own = headerValue(request, header)
  if (own !== undefined) return own
  const key = request.ip || UNKNOWN_CLIENT
  fallback?.(key)
  return key
}
