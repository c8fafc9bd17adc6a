import type { FastifyReply, FastifyRequest } from 'fastify'

/** What a middleware receives, in the manner of Hono's `c`. */
export interface MiddlewareContext {
  /** The Fastify request, with `header(name)` and `path` conveniences. */
  req: FastifyRequest
  reply: FastifyReply
  /** A JSON `Response`; return it to answer and stop the request. */
  json: (body: unknown, status?: number, headers?: Record<string, string>) => Response
  /** A plain-text `Response`. */
  text: (body: string, status?: number, headers?: Record<string, string>) => Response
}

/**
 * Runs before the services endpoint. Return a `Response` to stop the request;
 * `await next()` continues and resolves once the response has been sent.
 */
export type Middleware = (c: MiddlewareContext, next: () => Promise<void>) => void | Response | Promise<void | Response>

/** `*` matches every path; `/x/*` and `/x` match `/x` and everything below it. */
export function compilePathMatcher(path: string): (requestPath: string) => boolean {
  if (path === '*' || path === '/*' || path === '' || path === '/') return () => true
  const prefix = path.endsWith('/*') ? path.slice(0, -2) : path.replace(/\/+$/, '')
  return (requestPath) =>
    requestPath === prefix || (requestPath.startsWith(prefix) && requestPath.charCodeAt(prefix.length) === 47)
}

/** The path of a request URL, without its query string. */
export function pathOf(url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}
