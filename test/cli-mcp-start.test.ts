/**
 * What `fastify-actions mcp` leaves out of its start (issue 39 item 7, docs/cli.md#start-up): the
 * project's `rest` with MCP on and off what no message over stdio reaches (the OpenAPI document and
 * its page, `GET /status`, compression).
 */
import t from 'tap'
import { restForStdio } from '../lib/cli/mcp.js'

t.test("restForStdio: MCP on, the document, the page, /status and compression off, the rest the project's", async (t) => {
  const rest = {
    baseUrl: '/api',
    allowedOrigins: ['http://localhost:5173'],
    enableStatus: true,
    discovery: { enabled: true, secret: 's' },
    openapi: { enabled: true, info: { title: 'x', version: '1' }, reference: { path: '/docs' } },
    mcp: { requireAuth: true },
    rateLimiting: { limit: 5, windowMs: 1000 },
  }
  t.same(restForStdio(rest), {
    baseUrl: '/api',
    allowedOrigins: ['http://localhost:5173'],
    enableStatus: false,
    discovery: { enabled: true, secret: 's' },
    openapi: { enabled: false, info: { title: 'x', version: '1' }, reference: false },
    mcp: { requireAuth: true, enabled: true },
    rateLimiting: { limit: 5, windowMs: 1000 },
    compression: false,
  })
  t.same(restForStdio({ baseUrl: '/api' }), { baseUrl: '/api', mcp: { enabled: true }, enableStatus: false, compression: false }, 'no openapi given: none added')
})
