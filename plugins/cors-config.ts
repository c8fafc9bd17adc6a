/** The CORS plugin's defaults (`rest.cors`): what every answer allows and exposes. */
export const CORS_DEFAULTS = Object.freeze({
  credentials: true,
  allowHeaders: Object.freeze(['Content-Type', 'Authorization']),
  /** Added to `allowHeaders` when `rest.mcp` is on: MCP's Streamable HTTP clients send it on every request. */
  mcpAllowHeaders: Object.freeze(['Mcp-Protocol-Version']),
  /** Added to `allowHeaders` when an action streams: a reconnecting SSE client sends it (docs/streaming.md#resume). */
  streamAllowHeaders: Object.freeze(['Last-Event-ID']),
  /** Added to `allowHeaders` when an action takes idempotency keys (docs/idempotency.md). */
  idempotencyAllowHeaders: Object.freeze(['Idempotency-Key']),
  /** Added to `exposeHeaders` when an action takes idempotency keys: a replayed answer says so. */
  idempotencyExposeHeaders: Object.freeze(['Idempotent-Replayed']),
  allowMethods: Object.freeze(['POST', 'GET', 'OPTIONS']),
  exposeHeaders: Object.freeze(['Content-Length']),
  maxAge: 600,
} as const)
