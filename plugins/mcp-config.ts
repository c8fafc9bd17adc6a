/** `rest.mcp`, the MCP endpoint's options (plugins/mcp.ts): their types, keys and resolver; the defaults are `rest.mcp*` of plugins/rest-config.ts. */
import { configError, optionalBoolean, positiveInteger } from '../lib/config.js'
import type { KeyTable } from '../lib/config-keys.js'
import { REST_DEFAULTS } from './rest-config.js'

/** `rest.mcp`: the Model Context Protocol endpoint, off unless `enabled`. */
export interface McpConfig {
  /** Default false. */
  enabled?: boolean
  /** The endpoint's path, used as given (default `{baseUrl}/mcp`). */
  path?: string
  /** Server name announced at `initialize` (default: this package's name). */
  name?: string
  /** Server version announced at `initialize` (default: this package's version). */
  version?: string
  /** Require a valid JWT (as protected actions do) for every request to the endpoint (default false). */
  requireAuth?: boolean
  /**
   * A streaming action called as a tool: the most events one call collects (default 1000). Past it
   * the action is stopped and the result says `truncated: true` (docs/streaming.md#mcp).
   */
  maxStreamEvents?: number
  /**
   * A streaming action called as a tool: the most bytes of its events' JSON one call collects
   * (default 8 MiB). Past it the action is stopped and the result says `truncated: true`.
   */
  maxStreamBytes?: number
}

export interface ResolvedMcp {
  /** Normalised: a leading and no trailing slash. */
  readonly path: string
  readonly name?: string
  readonly version?: string
  readonly requireAuth: boolean
  readonly maxStreamEvents: number
  readonly maxStreamBytes: number
}

/** The keys `rest.mcp` accepts (lib/config-keys.ts refuses any other). */
export const MCP_KEYS = Object.freeze({ enabled: true, path: true, name: true, version: true, requireAuth: true, maxStreamEvents: true, maxStreamBytes: true } satisfies KeyTable<McpConfig>)

/** Checks and completes `rest.mcp` once, at boot; undefined unless `enabled`. */
export function resolveMcp(config: McpConfig | undefined, baseUrl: string): ResolvedMcp | undefined {
  if (!optionalBoolean('rest.mcp.enabled', config?.enabled, REST_DEFAULTS.mcpEnabled) || !config) return undefined
  if (config.path !== undefined && typeof config.path !== 'string') throw configError('rest.mcp.path', 'must be a path', config.path)
  const path = config.path?.trim().replace(/\/+$/, '')
  return Object.freeze({
    path: path ? (path.startsWith('/') ? path : `/${path}`) : `${baseUrl}${REST_DEFAULTS.mcpPath}`,
    name: config.name,
    version: config.version,
    requireAuth: optionalBoolean('rest.mcp.requireAuth', config.requireAuth, REST_DEFAULTS.mcpRequireAuth),
    maxStreamEvents: positiveInteger('rest.mcp.maxStreamEvents', config.maxStreamEvents, REST_DEFAULTS.mcpMaxStreamEvents),
    maxStreamBytes: positiveInteger('rest.mcp.maxStreamBytes', config.maxStreamBytes, REST_DEFAULTS.mcpMaxStreamBytes),
  })
}
