/** fastify-actions: the one public server entry. Nothing outside this file is API. */
import { fastifyActions } from './server/plugin.js'

export { createServer, type ActionsApp, type RestInterface, type RestServerInstance, type ServerInstance } from './server/create-server.js'
export { fastifyActions, getActions, type ActionsHandle, type ActionsDecorations, type FastifyActionsOptions } from './server/plugin.js'
export type { ServerConfig, ResolvedConfig } from './server/config.js'
export type { FetchFunction } from './server/fetch.js'
export default fastifyActions

export {
  createAction,
  createActions,
  createServices,
  type Action,
  type ActionDefinition,
  type ActionHandler,
  type ActionHooks,
  type ActionSpecial,
  type AfterActionHandler,
  type AfterActionHandlerArgs,
  isStreamingAction,
  type BeforeActionHandler,
  type BeforeActionHandlerArgs,
  type HookRef,
  type Service,
  type UploadMode,
} from './action.js'
export { Ok, Err, isOk, isErr, type Result, type OkResult, type ErrResult } from './result.js'
export type { Guard, GuardCall, GuardSelector } from './guards.js'
export {
  Fail,
  isDeclaredFailure,
  type DeclaredFailure,
  type DeclaredFailureOf,
  type DeclaredDataOf,
  type ErrorDeclaration,
  type ErrorDeclarations,
  type PlainErr,
} from './declared-errors.js'
export {
  ServerContext,
  createContext,
  getContext,
  runInRequestScope,
  getRequestStore,
  type RequestStore,
  type HookContext,
  type HookLogEntry,
  type SessionName,
  type SessionData,
  type AuthUser,
  type Resources,
} from './context.js'
export type { AuthResult } from './auth.js'
export { type CoreConfig, type OnBootConfig, type ResolvedCoreConfig } from './config.js'
export { DEFAULTS } from '../plugins/config.js'
export { createEngine, type Engine, type EngineOptions, type ExecuteOptions, type Authenticator, type ExecutionInfo, type ExecutionTrace, type Instrument } from './engine.js'
export { isActionStream, withEventId, type ActionStream } from './stream.js'
export { abortReasons } from './cancellation.js'
export { createOtelInstrument, spanAttributes, TRACER_NAME } from './tracing.js'
export { type ExternalRequest, type ExternalResponse, type Intent } from './envelope.js'
export { toExternalResponse } from './answer.js'
export {
  failureCodes,
  isFailure,
  isActionsError,
  codeOf,
  ACTION_FAILED,
  type ErrorCode,
  type Failure,
  type FailureCode,
} from './errors.js'
export type { CodedErrorClass } from './errors.js'
export { messages } from './messages.js'
export type { LogEntry, ServiceLogger } from './logger.js'
export type { ValidationSchema, InferInput, InferOutputSchema, ValidationIssue } from './validation.js'
export type { StandardSchemaV1 } from './standard-schema.js'
export type { UploadLimits, UploadSettings, UploadsConfig } from './uploads/config.js'
export { detectMimeType } from './uploads/mime.js'
export type { UploadPayload } from './uploads/form.js'
export { handleError, type HandleErrorParams } from './handle-error.js'
export * from './db/index.js'

// The HTTP side's public types (the Fastify adapters own them).
export { statusByCode } from './answer.js'
// Each feature's options types live beside its plugin (plugins/*-config.ts); plugins/config.ts composes them.
export type { AuthConfig, ResolvedAuth } from '../plugins/auth-config.js'
export type { CorsConfig, CorsOptions, CorsOrigin, CorsRequestContext, CorsResolver, CorsRouteRule } from '../plugins/cors-config.js'
export type { DiscoveryConfig, FastifyOptions } from '../plugins/rest-config.js'
export type { McpConfig } from '../plugins/mcp-config.js'
export type { OpenApiConfig, ResolvedOpenApi } from '../plugins/openapi-config.js'
export type { RateLimitConfig, RateLimitRedis, RateLimitStore, RateLimitStoreConstructor, ResolvedRateLimit } from '../plugins/rate-limit-config.js'
export type { ResolvedRest, RestConfig } from '../plugins/config.js'
export type { IdempotencyConfig, ResolvedIdempotency } from '../plugins/idempotency-config.js'
export {
  createMemoryIdempotencyStore,
  createRedisIdempotencyStore,
  type IdempotencyStore,
  type IdempotencyClaim,
  type IdempotencyRedis,
  type StoredAnswer,
} from './idempotency.js'
export type { Middleware, MiddlewareContext } from '../plugins/middleware.js'
export type { ActionsRequest, RestRequestContext } from '../plugins/request-scope.js'
export type { TokenSigner } from '../plugins/auth.js'
// Issuing tokens from an action: a login action calls signToken.
export { signToken, clearTokenCookie, type SignTokenOptions, type TokenCookieOptions } from '../plugins/token.js'
// End-to-end types for the client: createService keeps literal names; the helpers read an action's types.
export { createService, type TypedService, type PayloadOf, type OutputOf, type ErrorsOf, type EventOf, type FinalOf, type IsStreamingAction, type IsDeprecated } from './service.js'
export type { TypedAction, TypedStreamAction, ActionVisibility, StreamHandler, StreamFinal, DeprecatedMark, IdempotencyMode } from './action.js'
export { deprecationNotice, type Deprecation } from './deprecation.js'
export { UploadedFile, UploadedFiles } from './uploads/file-schema.js'
