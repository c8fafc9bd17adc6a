/**
 * mcp-sdk: the MCP SDK's own stateless Streamable HTTP server, as its example
 * (`@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStatelessStreamableHttp.js`) builds it:
 * a new `McpServer` and `StreamableHTTPServerTransport({ sessionIdGenerator: undefined })` per request,
 * connected, `handleRequest(req, res)`, both closed when the response closes. On `node:http` instead of
 * the example's Express app, with one tool doing `mcp-call`'s work: `tasks_echo`, its arguments checked
 * by the SDK (zod: `title` a string of at least 1 character, `count` an integer ≥ 0), answering the
 * same bytes as fastify-actions (`enableJsonResponse`: a JSON answer, not an SSE stream) and the same
 * cross-origin headers, set by hand.
 */
import { createServer } from 'node:http'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import * as z from 'zod/v4'
import { announce, CORS_HEADERS, MCP_PATH, ORIGIN, workloadFromEnv } from '../shared.js'

workloadFromEnv()

function getServer(): McpServer {
  const server = new McpServer({ name: 'bench', version: '1.0.0' })
  server.registerTool(
    'tasks_echo',
    { description: 'Echoes a task', inputSchema: { title: z.string().min(1), count: z.number().int().min(0) } },
    async ({ title, count }) => ({ content: [{ type: 'text', text: JSON.stringify({ title, count }) }] }),
  )
  return server
}

const http = createServer(async (req, res) => {
  if (req.method !== 'POST' || req.url !== MCP_PATH) {
    res.writeHead(404).end()
    return
  }
  if (req.headers.origin === ORIGIN) for (const [name, value] of Object.entries(CORS_HEADERS)) res.setHeader(name, value)
  const server = getServer()
  try {
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    await server.connect(transport)
    await transport.handleRequest(req, res)
    res.on('close', () => {
      void transport.close()
      void server.close()
    })
  } catch {
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null }))
  }
})
http.listen(0, '127.0.0.1', () => {
  const address = http.address()
  announce(typeof address === 'object' && address ? address.port : 0)
})
