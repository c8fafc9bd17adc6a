import type { FastifyRequest } from 'fastify'

/** The key of every request that carries none of the key headers. */
export const UNKNOWN_CLIENT = 'unknown-client'

function headerValue(request: FastifyRequest, name: string): string | undefined {
  const raw = request.headers[name]
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim()
  return value === '' ? undefined : value
}

/**
 * The client key (the specification's rate-limit rule): the limiting header, else the first hop of
 * `x-forwarded-for`, else `x-real-ip`, else `unknown-client`. `fallback` hears which fallback was used.
 */
export function clientKeyOf(request: FastifyRequest, header: string, fallback?: (key: string) => void): string {
  const own = headerValue(request, header)
  if (own !== undefined) return own
  const key = headerValue(request, 'x-forwarded-for')?.split(',')[0].trim() || headerValue(request, 'x-real-ip') || UNKNOWN_CLIENT
  fallback?.(key)
  return key
}
