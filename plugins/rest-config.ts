const MB = 1024 * 1024

/** The REST interface's own defaults (`rest.*`: where it listens, its limits, the document, MCP). */
export const REST_DEFAULTS = Object.freeze({
  baseUrl: '',
  host: 'localhost',
  port: 8000,
  bodyLimit: 1 * MB,
  requestTimeout: 30_000,
  enableStatus: false,
  enableStatic: false,
  staticDir: './assets',
  discoveryEnabled: false,
  corsEnabled: true,
  mcpEnabled: false,
  /** Under the base URL: `{baseUrl}/mcp`. */
  mcpPath: '/mcp',
  mcpRequireAuth: false,
  /** A streaming action called as a tool: the most events one call collects (docs/streaming.md#mcp). */
  mcpMaxStreamEvents: 1000,
  /** A streaming action called as a tool: the most bytes of events' JSON one call collects. */
  mcpMaxStreamBytes: 8 * MB,
  openapiEnabled: false,
  /** Under the base URL: `{baseUrl}/openapi.json`. */
  openapiPath: '/openapi.json',
  /** Under the base URL: `{baseUrl}/reference`. */
  openapiReferencePath: '/reference',
  openapiReference: true,
  openapiPublic: false,
  /** The document's `info.version` when `rest.openapi.info.version` is not given. */
  openapiVersion: '1.0.0',
  /** `rest.openapi.version`: the OpenAPI version the document is written in (`'3.2'` adds `itemSchema` for streams). */
  openapiSpecVersion: '3.1' as '3.1' | '3.2',
  /** `rest.openapi.servers` when not given: one server at this URL, the origin that serves the document (every path carries the base URL). */
  openapiServerUrl: '/',
  /** Per-action routes: on whenever the document is served; `rest.openapi.actionRoutes: true` turns them on without it. */
  actionRoutes: false,
  /** Deepest nesting of arrays and objects a JSON body may have (docs/security.md). */
  maxDepth: 64,
  /** Static files: a symbolic link that leaves `staticDir` answers 404 unless this is true. */
  staticFollowSymlinks: false,
  /** `rest.compression`: br and gzip answers of this many bytes or more (smaller ones stay raw). */
  compressionThreshold: 1024,
  compressionEncodings: Object.freeze(['br', 'gzip'] as const),
} as const)
