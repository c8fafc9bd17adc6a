/** `rest.openapi`, the OpenAPI document's options (plugins/openapi.ts): their types, keys and resolver; the defaults are `rest.openapi*` of plugins/rest-config.ts. */
import { configError, optionalBoolean } from '../lib/config.js'
import type { KeyTable } from '../lib/config-keys.js'
import { REST_DEFAULTS } from './rest-config.js'

/** The document's `info` (OpenAPI's Info Object): `title` and `version` default; `x-…` extensions are taken as they are. */
export interface OpenApiInfoConfig {
  title?: string
  version?: string
  description?: string
  summary?: string
  termsOfService?: string
  /** Who answers for the API: `info.contact`. */
  contact?: OpenApiContact
  /** Its license: `name` and either an SPDX `identifier` or a `url`. */
  license?: OpenApiLicense
  [extension: `x-${string}`]: unknown
}

export interface OpenApiContact {
  name?: string
  url?: string
  email?: string
  [extension: `x-${string}`]: unknown
}

export interface OpenApiLicense {
  name: string
  /** An SPDX expression (`MIT`, `Apache-2.0`); not with `url`. */
  identifier?: string
  url?: string
  [extension: `x-${string}`]: unknown
}

/** `rest.openapi`: the OpenAPI 3.1 (or 3.2) document, the reference page and the per-action routes (docs/openapi.md). */
export interface OpenApiConfig {
  /** Serve `GET {baseUrl}/openapi.json` (default false). Needs `rest.discovery.enabled`. */
  enabled?: boolean
  /** The document's path, used as given (default `{baseUrl}/openapi.json`). */
  path?: string
  /** The reference page: true (default) at `{baseUrl}/reference`, `{ path }` elsewhere, false for none. Needs `@scalar/fastify-api-reference`. */
  reference?: boolean | { path?: string }
  /** The document's `info` (default title: `serverName`, version `1.0.0`; `contact` and `license` when given). */
  info?: OpenApiInfoConfig
  /** The OpenAPI version of the document: `'3.1'` (default) or `'3.2'` (streams' events as `itemSchema`). */
  version?: '3.1' | '3.2'
  /** The document's `servers` (default: `[{ url: '/' }]`, the origin that serves the document: the paths carry the base URL). */
  servers?: Array<{ url: string; description?: string; [key: string]: unknown }>
  /** Serve the document and the page without the discovery secret (default false). */
  public?: boolean
  /** `POST {baseUrl}/services/{service}/{action}` for every visible action. Always on when `enabled`; true turns them on alone. */
  actionRoutes?: boolean
  /** Extra top-level fields merged into the document (`externalDocs`, `x-…`). */
  extra?: Record<string, unknown>
}

export interface ResolvedOpenApi {
  readonly path: string
  /** Undefined when the page is off. */
  readonly referencePath?: string
  readonly info: Readonly<OpenApiInfoConfig> & { readonly title: string; readonly version: string }
  /** The OpenAPI version the document is written in. */
  readonly version: '3.1' | '3.2'
  /** Never empty: the configured servers, else the origin that serves the document. */
  readonly servers: ReadonlyArray<{ url: string; description?: string }>
  readonly public: boolean
  readonly extra: Readonly<Record<string, unknown>>
}

/**
 * The keys `rest.openapi` accepts (lib/config-keys.ts refuses any other): `info` and its `contact`
 * and `license` take `x-…` extensions, `servers` and `extra` are taken as they are.
 */
export const OPENAPI_KEYS = Object.freeze({
  enabled: true,
  path: true,
  reference: Object.freeze({ path: true }),
  info: Object.freeze({
    title: true,
    version: true,
    description: true,
    summary: true,
    termsOfService: true,
    contact: Object.freeze({ name: true, url: true, email: true, 'x-*': true } satisfies KeyTable<OpenApiContact>),
    license: Object.freeze({ name: true, identifier: true, url: true, 'x-*': true } satisfies KeyTable<OpenApiLicense>),
    'x-*': true,
  } satisfies KeyTable<OpenApiInfoConfig>),
  version: true,
  servers: true,
  public: true,
  actionRoutes: true,
  extra: true,
} satisfies KeyTable<OpenApiConfig>)

function optionalPath(field: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback
  if (typeof value !== 'string' || value.trim() === '') throw configError(field, 'must be a path', value)
  const path = value.trim().replace(/\/+$/, '')
  return path.startsWith('/') ? path : `/${path}`
}

/** `rest.openapi.info` with its defaults, `contact` and `license` checked as OpenAPI defines them. */
function resolveInfo(info: OpenApiInfoConfig | undefined = {}, serverName: string): ResolvedOpenApi['info'] {
  if (typeof info !== 'object' || info === null) throw configError('rest.openapi.info', 'must be an object', info)
  const { contact, license } = info
  if (contact !== undefined) {
    if (typeof contact !== 'object' || contact === null) throw configError('rest.openapi.info.contact', 'must be an object of { name, url, email }', contact)
    for (const field of ['name', 'url', 'email'] as const) {
      if (contact[field] !== undefined && typeof contact[field] !== 'string') throw configError(`rest.openapi.info.contact.${field}`, 'must be a string', contact[field])
    }
  }
  if (license !== undefined) {
    if (typeof license !== 'object' || license === null || typeof license.name !== 'string' || license.name === '') {
      throw configError('rest.openapi.info.license', 'must be an object with a name (and an SPDX identifier or a url)', license)
    }
    if (license.identifier !== undefined && license.url !== undefined) throw configError('rest.openapi.info.license', 'takes an identifier or a url, not both (OpenAPI)')
  }
  return Object.freeze({ ...info, title: info.title ?? serverName, version: info.version ?? REST_DEFAULTS.openapiVersion })
}

/** Checks and completes `rest.openapi` once, at boot; undefined unless `enabled`. `serverName` is the document's default title. */
export function resolveOpenApi(config: OpenApiConfig | undefined, baseUrl: string, serverName: string): ResolvedOpenApi | undefined {
  if (config !== undefined && (typeof config !== 'object' || config === null)) throw configError('rest.openapi', 'must be an object', config)
  if (!optionalBoolean('rest.openapi.enabled', config?.enabled, REST_DEFAULTS.openapiEnabled) || !config) return undefined
  if (config.actionRoutes === false) throw configError('rest.openapi.actionRoutes', 'cannot be false while the document is served (the document lists the routes)', false)
  const reference = config.reference ?? REST_DEFAULTS.openapiReference
  if (typeof reference !== 'boolean' && (typeof reference !== 'object' || reference === null)) throw configError('rest.openapi.reference', 'must be a boolean or { path }', reference)
  const referencePath = reference === false ? undefined : optionalPath('rest.openapi.reference.path', reference === true ? undefined : reference.path, `${baseUrl}${REST_DEFAULTS.openapiReferencePath}`)
  if (config.servers !== undefined && (!Array.isArray(config.servers) || config.servers.length === 0 || !config.servers.every((server) => typeof server?.url === 'string'))) {
    throw configError('rest.openapi.servers', 'must be a non-empty array of { url }', config.servers)
  }
  const version = config.version ?? REST_DEFAULTS.openapiSpecVersion
  if (version !== '3.1' && version !== '3.2') throw configError('rest.openapi.version', "must be '3.1' or '3.2'", version)
  return Object.freeze({
    path: optionalPath('rest.openapi.path', config.path, `${baseUrl}${REST_DEFAULTS.openapiPath}`),
    referencePath,
    info: resolveInfo(config.info, serverName),
    version,
    servers: Object.freeze((config.servers ?? [{ url: REST_DEFAULTS.openapiServerUrl, description: 'The server that serves this document' }]).map((server) => Object.freeze({ ...server }))),
    public: optionalBoolean('rest.openapi.public', config.public, REST_DEFAULTS.openapiPublic),
    extra: Object.freeze({ ...(config.extra ?? {}) }),
  })
}

/** Whether the per-action routes are served: always with the document, else `rest.openapi.actionRoutes` (default false). */
export function resolveActionRoutes(config: OpenApiConfig | undefined, documentServed: boolean): boolean {
  return documentServed || optionalBoolean('rest.openapi.actionRoutes', config?.actionRoutes, REST_DEFAULTS.actionRoutes)
}
