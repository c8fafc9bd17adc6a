import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Result } from './result.js'
import type { ValidationSchema } from './validation.js'
import type { ServerContext } from './context.js'
import type { Engine } from './engine.js'
import type { Middleware } from './middleware.js'
import type { FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import type { Redis } from 'ioredis'

/** Names another action to run as a hook. */
export interface HookRef {
  service: string
  action: string
  isCritical: boolean
}

export interface ActionHooks {
  before?: HookRef[]
  after?: HookRef[]
}

export type UploadMode = 'flat' | 'structured'

export interface ActionSpecial {
  contentType: string
  uploadMode?: UploadMode
}

export type ActionHandler<TInput = unknown, TOutput = unknown> = (
  data: TInput,
  context: ServerContext,
) => Result<TOutput, string> | Promise<Result<TOutput, string>>

/** A named operation. Create it with `createAction` so `data` is typed from `validation`. */
export interface Action<TInput = any, TOutput = unknown> {
  name: string
  description: string
  validation?: ValidationSchema | null
  handler: ActionHandler<TInput, TOutput>
  isProtected?: boolean
  accessControl?: string[]
  visibility?: { rest?: boolean; rpc?: boolean; mcp?: boolean }
  hooks?: ActionHooks
  meta?: Record<string, unknown>
  isSpecial?: ActionSpecial
  /** Per-action timeout in ms; overrides `ServerConfig.actionTimeout`. */
  timeout?: number
}

/** A named group of actions. */
export interface Service {
  name: string
  description: string
  actions: Action[]
  meta?: Record<string, unknown>
}

export type Intent = 'explore' | 'execute' | 'schema'

/** The JSON body of `POST {baseUrl}/services`. */
export interface ExternalRequest {
  intent: Intent
  service: string
  action: string
  payload: Record<string, unknown>
}

/** Every response body. */
export interface ExternalResponse<TData extends Record<string, unknown> = Record<string, unknown>> {
  status: boolean
  message: string
  data: TData
}

export interface LogEntry {
  atFunction: string
  message: string
  data?: unknown
}

/** A logger the framework writes through; each call returns the log id. */
export interface ServiceLogger {
  info: (entry: LogEntry) => string
  warn: (entry: LogEntry) => string
  error: (entry: LogEntry) => string
}

export interface Resources<TDB = unknown> {
  logger?: ServiceLogger
  database?: TDB
  cache?: unknown
  [key: string]: unknown
}

export interface AuthResult {
  userId: string
  organizationId?: string
  claims: Record<string, unknown>
}

export interface AuthConfig {
  /** The JWT verification secret. */
  secret: string
  method?: 'header' | 'cookie'
  headerName?: string
  cookieName?: string
  /** Accepted signing algorithms; HS256 by default. */
  algorithms?: string[]
}

export interface BeforeActionHandlerArgs {
  nileContext: ServerContext
  action: Action
  payload: unknown
}

export interface AfterActionHandlerArgs extends BeforeActionHandlerArgs {
  result: Result<unknown, string>
}

export type BeforeActionHandler = (args: BeforeActionHandlerArgs) => Result<unknown, string> | Promise<Result<unknown, string>>
export type AfterActionHandler = (args: AfterActionHandlerArgs) => Result<unknown, string> | Promise<Result<unknown, string>>

export interface RateLimitStoreOptions {
  timeWindow: number
  key?: string
}

export interface RateLimitConfig {
  windowMs?: number
  limit?: number
  standardHeaders?: boolean
  /** The request header whose value is the client key; rate limiting is on only when it is set. */
  limitingHeader: string
  /** A custom @fastify/rate-limit store constructor (`new Store(options)` with `incr`, `child`); wins over `redis`. */
  store?: FastifyRateLimitStoreCtor
  /** An ioredis client: counters shared by every instance that uses the same Redis. */
  redis?: Redis
  diagnostics?: boolean
}

export interface DiscoveryConfig {
  enabled?: boolean
  secret?: string
}

export interface UploadsConfig {
  enforceContentType?: boolean
  limits?: {
    maxFiles?: number
    maxFileSize?: number
    minFileSize?: number
    maxTotalSize?: number
    maxFilenameLength?: number
    /** Text fields per form, the routing fields included (default 100). */
    maxFields?: number
    /** Bytes per text field (default 64 KiB). */
    maxFieldSize?: number
  }
  allow?: {
    mimeTypes?: string[]
    extensions?: string[]
  }
  diagnostics?: boolean
}

export type CorsOrigin =
  | string
  | string[]
  | ((origin: string, c: CorsRequestContext) => string | undefined | null)

export interface CorsOptions {
  origin?: CorsOrigin
  allowMethods?: string[] | ((origin: string, c: CorsRequestContext) => string[])
  allowHeaders?: string[]
  maxAge?: number
  credentials?: boolean
  exposeHeaders?: string[]
}

export interface CorsRequestContext {
  req: FastifyRequest
}

export type CorsResolver = (origin: string, c: CorsRequestContext) => boolean | CorsOptions | undefined

export interface CorsRouteRule {
  path: string
  options?: CorsOptions
  resolver?: CorsResolver
}

export interface CorsConfig {
  enabled?: boolean | 'default'
  defaults?: CorsOptions
  addCors?: CorsRouteRule[]
}

export interface RestConfig {
  baseUrl: string
  host?: string
  port?: number
  diagnostics?: boolean
  enableStatic?: boolean
  staticDir?: string
  enableStatus?: boolean
  rateLimiting?: RateLimitConfig
  allowedOrigins: string[]
  cors?: CorsConfig
  uploads?: UploadsConfig
  discovery?: DiscoveryConfig
  mcp?: import('../plugins/mcp.js').McpConfig
  /** Largest JSON body in bytes (default 1 MiB); a larger one is a 413 envelope. */
  bodyLimit?: number
  /** Longest time in ms to receive a whole request, headers and body (default 30000); a slower client gets a 408. */
  requestTimeout?: number
}

export interface OnBootConfig {
  fn: (context: ServerContext) => Result<null, string> | Promise<Result<null, string>>
  maxWaitTime?: number
}

export interface ServerConfig<TDB = unknown> {
  serverName: string
  runtime?: 'bun' | 'node'
  services: Service[]
  diagnostics?: boolean
  logServices?: boolean
  resources?: Resources<TDB>
  auth?: AuthConfig
  rest?: RestConfig
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
}

/** The REST side of a server. */
export interface RestInterface {
  app: FastifyInstance
  config: RestConfig
  addMiddleware: (path: string, fn: Middleware) => void
}

export interface ServerInstance<TDB = unknown> {
  config: ServerConfig<TDB>
  engine: Engine
  context: ServerContext<TDB>
  rest?: RestInterface
  /** Closes the REST app (in-flight requests finish first). */
  close: () => Promise<void>
}

/** The `rest` value of a request store: the request being served. */
export interface RestRequestContext {
  req: FastifyRequest
  reply: FastifyReply
}
