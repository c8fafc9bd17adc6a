import type { Service, ServerConfig } from '../../lib/index.js'

/**
 * A configuration with every optional concern on (auth, CORS, load shedding, rate limiting, static
 * files, uploads, discovery, OpenAPI with its page, MCP, status): the server the docs-claims and
 * plugin-tree tests read routes and plugins from. A new concern is turned on here, once.
 */
export function everyOptionConfig(options: { serverName: string; services: Service[]; staticDir: string; allowedOrigins?: string[] }): ServerConfig {
  return {
    serverName: options.serverName,
    runtime: 'node',
    logServices: false,
    services: options.services,
    auth: { secret: 'a-long-random-secret-for-every-option-tests' },
    rest: {
      baseUrl: '/api',
      allowedOrigins: options.allowedOrigins ?? [],
      enableStatus: true,
      enableStatic: true,
      staticDir: options.staticDir,
      discovery: { enabled: true },
      mcp: { enabled: true },
      openapi: { enabled: true },
      rateLimiting: { limitingHeader: 'x-api-key' },
      underPressure: true,
      uploads: {},
    },
  }
}
