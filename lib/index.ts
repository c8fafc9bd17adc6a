/** fastify-actions: the one public entry. Nothing outside this file is API. */
export { createServer } from './server.js'
export { createAction, createActions, createServices, type ActionDefinition } from './action.js'
export { Ok, Err, isOk, isErr, type Result, type OkResult, type ErrResult } from './result.js'
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
} from './context.js'
export { createEngine, type Engine, type EngineOptions, type Failure, type Authenticator } from './engine.js'
export { toExternalResponse } from './envelope.js'
export { messages } from './messages.js'
export type { ValidationSchema, InferInput, ValidationIssue } from './validation.js'
export type { StandardSchemaV1 } from './standard-schema.js'
export type { Middleware, MiddlewareContext } from './middleware.js'
export type { FetchFunction } from './fetch.js'
export type {
  Action,
  ActionHandler,
  ActionHooks,
  ActionSpecial,
  AfterActionHandler,
  AfterActionHandlerArgs,
  AuthConfig,
  AuthResult,
  BeforeActionHandler,
  BeforeActionHandlerArgs,
  CorsConfig,
  CorsOptions,
  CorsResolver,
  CorsRouteRule,
  DiscoveryConfig,
  ExternalRequest,
  ExternalResponse,
  HookRef,
  Intent,
  LogEntry,
  OnBootConfig,
  RateLimitConfig,
  Resources,
  RestConfig,
  RestInterface,
  ServerConfig,
  ServerInstance,
  Service,
  ServiceLogger,
  RestRequestContext,
  UploadMode,
  UploadsConfig,
} from './types.js'
export { handleError, type HandleErrorParams } from './handle-error.js'
export * from './db/index.js'
/** The contract of a custom `rateLimiting.store` (the store of @fastify/rate-limit). */
export type { FastifyRateLimitStore as RateLimitStore, FastifyRateLimitStoreCtor as RateLimitStoreConstructor } from '@fastify/rate-limit'
export type { CorsOrigin, CorsRequestContext } from './types.js'
export { detectMimeType } from './uploads/mime.js'
export type { UploadPayload } from './uploads/form.js'
// End-to-end types for the client (issue 13): createService keeps literal names; the helpers read an action's types.
export { createService, type TypedService, type PayloadOf, type OutputOf } from './service.js'
export type { TypedAction, ActionVisibility } from './action.js'
// Issuing tokens from an action (issue 13): a login action calls signToken.
export { signToken, clearTokenCookie, type SignTokenOptions } from '../plugins/token.js'
export { UploadedFile, UploadedFiles } from './uploads/file-schema.js'
