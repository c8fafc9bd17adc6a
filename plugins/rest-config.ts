/**
 * The REST interface's own options (`rest.*`: where it listens, its limits, discovery) and the defaults
 * of `rest.*`; each feature's options (CORS, MCP, OpenAPI, …) are in its own `*-config.ts`, composed
 * by plugins/config.ts.
 */
import type { FastifyServerOptions } from 'fastify'
import { configError } from '../lib/config.js'
import type { KeyTable } from '../lib/config-keys.js'

export interface DiscoveryConfig {
  enabled?: boolean
  secret?: string
}

/** The keys `rest.discovery` accepts. */
export const DISCOVERY_KEYS = Object.freeze({ enabled: true, secret: true } satisfies KeyTable<DiscoveryConfig>)

/**
 * Fastify server options `createServer` passes through (`logger`, `trustProxy`, `genReqId`,
 * `requestIdHeader`, `https`, `http2`…). The plugin ignores them: the app is the user's.
 */
export type FastifyOptions = FastifyServerOptions & { https?: unknown; http2?: boolean; http?: Record<string, unknown> }

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

/** Normalises the base URL: a leading slash, no trailing slash, `''` for the root. */
export function normalizeBaseUrl(baseUrl: string | undefined): string {
  const trimmed = (baseUrl ?? '').trim().replace(/\/+$/, '')
  if (trimmed === '') return ''
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`
}

export function resolveAllowedHosts(value: unknown): readonly string[] | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value) || !value.every((host) => typeof host === 'string' && host.trim() !== '')) {
    throw configError('rest.allowedHosts', "must be an array of host names (such as 'api.example.com', '.example.com' or '*')", value)
  }
  return Object.freeze([...value])
}

export function resolveHost(value: unknown): string {
  if (value === undefined) return REST_DEFAULTS.host
  if (typeof value !== 'string' || value.trim() === '') throw configError('rest.host', 'must be a host name or address', value)
  return value
}

/** A TCP port: an integer from 0 (any free port) to 65535. `Number('abc')` is NaN, and is refused here rather than printed. */
export function resolvePort(value: unknown): number {
  if (value === undefined) return REST_DEFAULTS.port
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 65535) throw configError('rest.port', 'must be an integer from 0 to 65535', value)
  return value
}
