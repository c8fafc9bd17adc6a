/**
 * What callers see of the example beyond its services (the base URL, MCP, the OpenAPI document and
 * its per-action routes): used by example/app.ts, and by example/contract.config.ts, which
 * `fastify-actions contract` and `diff` read (a module of its own, so they load no database or Redis).
 */
export const exampleSurfaces = {
  baseUrl: '/api',
  mcp: { enabled: true },
  // GET /api/openapi.json and the reference page GET /api/reference (docs/openapi.md), plus per-action routes.
  openapi: {
    enabled: true,
    info: {
      title: 'fastify-actions example',
      version: '1.0.0',
      description: 'Tasks, accounts and greetings',
      // Shown by the reference page and asked for by linters (Redocly `info-license`, Spectral `info-contact`).
      contact: { name: 'fastify-actions', url: 'https://github.com/fastify-actions/fastify-actions/issues' },
      license: { name: 'MIT', identifier: 'MIT' },
    },
  },
} as const
