import type { AfterActionHandler, BeforeActionHandler, Service } from './action.js'
import type { Resources, ServerContext } from './context.js'
import type { KeyTable } from './config-keys.js'
import { ErrConfig, ErrEmptyServices } from './errors.js'
import type { Result } from './result.js'

const MB = 1024 * 1024

/**
 * The core's defaults: those of the part of the configuration that knows no HTTP. Each plugin holds
 * its own (plugins/*-config.ts); plugins/config.ts assembles them with these into `DEFAULTS`, the one
 * table docs/server.md shows (a test holds them together).
 */
export const CORE_DEFAULTS = Object.freeze({
  runtime: 'bun',
  diagnostics: false,
  logServices: true,
  forceNewInstance: false,
  onBootMaxWaitTime: 10_000,
  /** `exposeErrors` defaults to false when `NODE_ENV` is this, true otherwise. */
  hideErrorsIn: 'production',
  uploads: Object.freeze({
    enforceContentType: false,
    limits: Object.freeze({
      maxFiles: 10,
      maxFileSize: 10 * MB,
      minFileSize: 1,
      maxTotalSize: 20 * MB,
      maxFilenameLength: 128,
      maxFields: 100,
      maxFieldSize: 64 * 1024,
    }),
    mimeTypes: Object.freeze(['image/png', 'image/jpeg', 'application/pdf']),
    extensions: Object.freeze(['.png', '.jpg', '.jpeg', '.pdf']),
  }),
} as const)

export interface OnBootConfig {
  fn: (context: ServerContext) => Result<null, string> | Promise<Result<null, string>>
  maxWaitTime?: number
}

/** The part of `ServerConfig` that knows no HTTP. */
export interface CoreConfig<TDB = unknown> {
  serverName: string
  runtime?: 'bun' | 'node'
  services: Service[]
  diagnostics?: boolean
  logServices?: boolean
  resources?: Resources<TDB>
  /** Placeholder: accepted and ignored. */
  websocket?: Record<string, unknown>
  /** Placeholder: accepted and ignored. */
  rpc?: Record<string, unknown>
  onBeforeActionHandler?: BeforeActionHandler
  onAfterActionHandler?: AfterActionHandler
  onBoot?: OnBootConfig
  forceNewInstance?: boolean
  /** Default timeout in ms for every action handler; none by default. */
  actionTimeout?: number
  /**
   * Answer a thrown exception's own text (the specification's rule). Default: true, except when
   * `NODE_ENV` is `production`: then the answer is `Internal server error (request id <id>)` and the
   * text goes to the log only (an exception can carry a database URL, a path, a password).
   */
  exposeErrors?: boolean
}

/** Every key of `CoreConfig` (the unknown-key check, lib/config-keys.ts): a key added to the type must be added here. */
export const CORE_KEYS: KeyTable<CoreConfig> = Object.freeze({
  serverName: true,
  runtime: true,
  services: true,
  diagnostics: true,
  logServices: true,
  resources: true,
  websocket: true,
  rpc: true,
  onBeforeActionHandler: true,
  onAfterActionHandler: true,
  onBoot: Object.freeze({ fn: true, maxWaitTime: true } satisfies KeyTable<OnBootConfig>),
  forceNewInstance: true,
  actionTimeout: true,
  exposeErrors: true,
})

/** `CoreConfig` with every default applied, frozen. */
export interface ResolvedCoreConfig {
  readonly serverName: string
  readonly runtime: 'bun' | 'node'
  readonly services: readonly Service[]
  readonly diagnostics: boolean
  readonly logServices: boolean
  readonly resources: Resources<any>
  readonly onBeforeActionHandler?: BeforeActionHandler
  readonly onAfterActionHandler?: AfterActionHandler
  readonly onBoot?: { readonly fn: OnBootConfig['fn']; readonly maxWaitTime: number }
  readonly forceNewInstance: boolean
  readonly actionTimeout?: number
  readonly exposeErrors: boolean
}

/** A configuration error naming the field: `createServer: <field> <expectation>, got <value>`. */
export function configError(field: string, expectation: string, value?: unknown): Error {
  const got = arguments.length > 2 ? `, got ${describe(value)}` : ''
  return new ErrConfig(`createServer: ${field} ${expectation}${got}`)
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`
  if (typeof value === 'function') return 'a function'
  // JSON writes NaN and Infinity as null: `Number('abc')` must read as what it is.
  if (typeof value === 'number') return String(value)
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

/** `value` when it is a positive integer (or undefined: then `fallback`); else a config error. */
export function positiveInteger(field: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) throw configError(field, 'must be a positive integer', value)
  return value
}

export function optionalBoolean(field: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback
  if (typeof value !== 'boolean') throw configError(field, 'must be a boolean', value)
  return value
}

function optionalFunction<F>(field: string, value: F | undefined): F | undefined {
  if (value !== undefined && typeof value !== 'function') throw configError(field, 'must be a function', value)
  return value
}

/** Checks and completes the core configuration once, at boot. */
export function resolveCoreConfig<TDB>(config: CoreConfig<TDB>): ResolvedCoreConfig {
  if (!Array.isArray(config?.services) || config.services.length === 0) throw new ErrEmptyServices()
  if (typeof config.serverName !== 'string') throw configError('serverName', 'must be a string', config.serverName)
  const runtime = config.runtime ?? CORE_DEFAULTS.runtime
  if (runtime !== 'bun' && runtime !== 'node') throw configError('runtime', "must be 'bun' or 'node'", runtime)
  const onBoot = config.onBoot
  if (onBoot !== undefined && (typeof onBoot !== 'object' || onBoot === null || typeof onBoot.fn !== 'function')) {
    throw configError('onBoot', 'must be { fn, maxWaitTime? }', onBoot)
  }
  return Object.freeze({
    serverName: config.serverName,
    runtime,
    services: Object.freeze(config.services.slice()),
    diagnostics: optionalBoolean('diagnostics', config.diagnostics, CORE_DEFAULTS.diagnostics),
    logServices: config.logServices !== false,
    resources: config.resources ?? {},
    onBeforeActionHandler: optionalFunction('onBeforeActionHandler', config.onBeforeActionHandler),
    onAfterActionHandler: optionalFunction('onAfterActionHandler', config.onAfterActionHandler),
    onBoot: onBoot && Object.freeze({ fn: onBoot.fn, maxWaitTime: positiveInteger('onBoot.maxWaitTime', onBoot.maxWaitTime, CORE_DEFAULTS.onBootMaxWaitTime) }),
    forceNewInstance: config.forceNewInstance === true,
    actionTimeout: config.actionTimeout === undefined ? undefined : positiveInteger('actionTimeout', config.actionTimeout, 0),
    exposeErrors: optionalBoolean('exposeErrors', config.exposeErrors, process.env.NODE_ENV !== CORE_DEFAULTS.hideErrorsIn),
  })
}
