/**
 * Every concern fastify-actions adds to a Fastify app (CORS, rate limiting, auth, the services
 * endpoint, ...) is a named Fastify plugin: `app.printPlugins()` lists it, `app.hasPlugin(name)` knows
 * it, and a concern that needs another declares it, so registering it out of order fails at boot with
 * Fastify's own `FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED`.
 *
 * A concern whose hooks must reach the routes of the context it is registered in (CORS, rate limit,
 * middleware, auth, the error envelope, the request scope) skips encapsulation, as `fastify-plugin`
 * does; one that only adds its own routes (the services endpoint, OpenAPI, MCP, status) stays
 * encapsulated and is only named.
 */
import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'

/** The plugin name of a concern: `fastify-actions-<concern>`. */
export const concernName = (concern: string): string => `fastify-actions-${concern}`

export interface ConcernMeta {
  /** Keep the concern's own context: its hooks and decorators stay on its own routes. */
  encapsulate?: boolean
  /** Concerns that must be registered before this one, by concern name (`'errors'`, not the plugin name). */
  dependencies?: string[]
}

/** `fn` as the named plugin `fastify-actions-<concern>`, with its dependencies. */
export function concern<Options>(name: string, fn: FastifyPluginAsync<Options & Record<never, never>>, meta: ConcernMeta = {}): FastifyPluginAsync<Options & Record<never, never>> {
  return fp(fn, {
    name: concernName(name),
    fastify: '5.x',
    encapsulate: meta.encapsulate ?? false,
    dependencies: (meta.dependencies ?? []).map(concernName),
  })
}
