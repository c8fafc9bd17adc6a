import createError, { type FastifyErrorConstructor } from '@fastify/error'
import { messages } from './messages.js'
import type { ErrResult } from './result.js'

/**
 * Every failure the framework produces, made here and nowhere else (the way Fastify keeps its
 * `FST_ERR_*` in lib/errors.js). Two kinds:
 * - a **Failure** is returned: an `Err` that also carries a code and the envelope's `data`. The core
 *   never picks an HTTP status; the codec (lib/answer.ts) maps each code to one.
 * - a **thrown error** (boot, configuration, misuse) is an @fastify/error class with a code.
 * @fastify/error is a dependency-free error factory; no status is given to it here.
 */

/** The codes of returned failures. */
export const failureCodes = [
  'FA_ERR_INVALID_BODY',
  'FA_ERR_INVALID_REQUEST',
  'FA_ERR_WILDCARD_EXECUTE',
  'FA_ERR_SERVICE_NOT_FOUND',
  'FA_ERR_ACTION_NOT_FOUND',
  'FA_ERR_VALIDATION',
  'FA_ERR_HOOK_FAILED',
  'FA_ERR_ACTION_TIMEOUT',
  'FA_ERR_NOT_A_RESULT',
  'FA_ERR_OUTPUT_MISMATCH',
  'FA_ERR_INTERNAL',
  'FA_ERR_AUTH',
  'FA_ERR_DISCOVERY_DISABLED',
  'FA_ERR_DISCOVERY_SECRET',
  'FA_ERR_UNSUPPORTED_MEDIA_TYPE',
  'FA_ERR_BODY_TOO_LARGE',
  'FA_ERR_ROUTE_NOT_FOUND',
  'FA_ERR_RATE_LIMITED',
  'FA_ERR_BAD_URL',
  'FA_ERR_BAD_REQUEST',
  'FA_ERR_REQUEST_TIMEOUT',
  'FA_ERR_HEADERS_TOO_LARGE',
  'FA_ERR_MULTIPART_ROUTING',
  'FA_ERR_MULTIPART_INVALID',
  'FA_ERR_UPLOAD_LIMIT',
  'FA_ERR_UPLOAD_TYPE',
  'FA_ERR_UPLOAD_MIXED_KEYS',
  'FA_ERR_UPLOAD_FILENAME_LENGTH',
  'FA_ERR_UPLOAD_EMPTY_FILE',
  'FA_ERR_UPLOAD_TOO_SMALL',
  'FA_ERR_UPLOAD_FILENAME_INVALID',
  'FA_ERR_MULTIPART_PART_INVALID',
  'FA_ERR_JSON_TOO_DEEP',
  'FA_ERR_UNDER_PRESSURE',
  'FA_ERR_NOT_ACCEPTABLE',
  'FA_ERR_TOO_MANY_STREAMS',
  'FA_ERR_STREAM_DURATION',
  'FA_ERR_SHUTTING_DOWN',
  'FA_ERR_HOST_NOT_ALLOWED',
  'FA_ERR_GUARD_REFUSED',
  'FA_ERR_ORIGIN_NOT_ALLOWED',
  'FA_ERR_IDEMPOTENCY_KEY_REQUIRED',
  'FA_ERR_IDEMPOTENCY_KEY_INVALID',
  'FA_ERR_IDEMPOTENCY_IN_FLIGHT',
  'FA_ERR_IDEMPOTENCY_KEY_REUSED',
  'FA_ERR_IDEMPOTENCY_UNAVAILABLE',
] as const

export type FailureCode = (typeof failureCodes)[number]

/**
 * A handler's own `Err(text)` carries no code; in logs and in the status table it is this one.
 * (It is not a Failure: a user's Err never picks its own status.)
 */
export const ACTION_FAILED = 'FA_ERR_ACTION_FAILED'

/** An `Err` made by the framework: its code decides the HTTP status, `data` goes into the envelope. */
export interface Failure<C extends FailureCode = FailureCode> extends ErrResult<string> {
  readonly code: C
  readonly data: Record<string, unknown>
  /** For logs only, never answered: what went wrong behind a 500. */
  readonly detail?: string
}

// Only failures made here carry a code: a user's Err-shaped object never picks its own status.
const made = new WeakSet<object>()

function failure<C extends FailureCode>(code: C, message: string, data: Record<string, unknown> = {}, detail?: string): Failure<C> {
  const made_: Failure<C> = { ok: false as const, error: message, code, data }
  // Not enumerable: a failure written out as JSON (or compared field by field) never carries it.
  if (detail !== undefined) Object.defineProperty(made_, 'detail', { value: detail, enumerable: false })
  Object.freeze(made_)
  made.add(made_)
  return made_
}

/** True for a failure made by the framework (never for a handler's own `Err`). */
export function isFailure(value: unknown): value is Failure {
  return typeof value === 'object' && value !== null && made.has(value)
}

/** The code of any `Err`: the failure's own, or `FA_ERR_ACTION_FAILED` for a handler's `Err`. */
export function codeOf(result: ErrResult<unknown>): FailureCode | typeof ACTION_FAILED {
  return isFailure(result) ? result.code : ACTION_FAILED
}

/** The content codings a request body may carry (RFC 9110 8.4.1), as a 415 and `Accept-Encoding` name them. */
export const SUPPORTED_ENCODINGS = Object.freeze(['gzip', 'deflate', 'br'] as const)

/** The framework's failures, one constructor each. */
export const fail = {
  invalidBody: () => failure('FA_ERR_INVALID_BODY', messages.invalidBody),
  invalidRequest: (errors: unknown) => failure('FA_ERR_INVALID_REQUEST', messages.invalidRequest, { errors }),
  wildcardExecute: (service: string, action: string) => failure('FA_ERR_WILDCARD_EXECUTE', messages.wildcardExecute(service, action)),
  serviceNotFound: (service: string) => failure('FA_ERR_SERVICE_NOT_FOUND', messages.serviceNotFound(service)),
  actionNotFound: (service: string, action: string) => failure('FA_ERR_ACTION_NOT_FOUND', messages.actionNotFound(service, action)),
  validation: (errors: unknown) => failure('FA_ERR_VALIDATION', messages.validationFailed, { errors }),
  hookFailed: (hook: string, error: string) => failure('FA_ERR_HOOK_FAILED', messages.hookFailed(hook, error)),
  actionTimeout: (name: string, ms: number) => failure('FA_ERR_ACTION_TIMEOUT', messages.actionTimedOut(name, ms)),
  /** A programming error (a handler or global hook that returned no Result): logged, answered as the 500. */
  notAResult: (what: string) => failure('FA_ERR_NOT_A_RESULT', messages.internal, {}, messages.notAResult(what)),
  /** An `Ok` value its action's `output` schema cannot serialize: logged, answered as the 500 (no field leaks). */
  outputMismatch: (name: string, reason: string) => failure('FA_ERR_OUTPUT_MISMATCH', messages.internal, {}, messages.outputMismatch(name, reason)),
  /** A declared error's data its schema cannot serialize: the same 500 as an output mismatch, logged with the code. */
  errorDataMismatch: (name: string, code: string, reason: string) => failure('FA_ERR_OUTPUT_MISMATCH', messages.internal, {}, messages.errorDataMismatch(name, code, reason)),
  internal: () => failure('FA_ERR_INTERNAL', messages.internal),
  auth: (reason: string) => failure('FA_ERR_AUTH', messages.authFailed(reason)),
  discoveryDisabled: () => failure('FA_ERR_DISCOVERY_DISABLED', messages.discoveryDisabled),
  discoverySecret: () => failure('FA_ERR_DISCOVERY_SECRET', messages.discoverySecret),
  unsupportedMediaType: () => failure('FA_ERR_UNSUPPORTED_MEDIA_TYPE', messages.unsupportedMediaType),
  bodyTooLarge: () => failure('FA_ERR_BODY_TOO_LARGE', messages.bodyTooLarge),
  unsupportedEncoding: (encoding: string) =>
    failure('FA_ERR_UNSUPPORTED_MEDIA_TYPE', messages.unsupportedEncoding(encoding, SUPPORTED_ENCODINGS), { supportedEncodings: [...SUPPORTED_ENCODINGS] }),
  undecodableBody: (encoding: string) => failure('FA_ERR_INVALID_BODY', messages.undecodableBody(encoding)),
  routeNotFound: (baseUrl: string) => failure('FA_ERR_ROUTE_NOT_FOUND', messages.routeNotFound(baseUrl)),
  rateLimited: (seconds: number) => failure('FA_ERR_RATE_LIMITED', messages.rateLimited(seconds)),
  badUrl: () => failure('FA_ERR_BAD_URL', messages.badUrl),
  badRequest: () => failure('FA_ERR_BAD_REQUEST', messages.badRequest),
  requestTimeout: () => failure('FA_ERR_REQUEST_TIMEOUT', messages.requestTimeout),
  headersTooLarge: () => failure('FA_ERR_HEADERS_TOO_LARGE', messages.headersTooLarge),
  multipartRouting: () => failure('FA_ERR_MULTIPART_ROUTING', messages.formDataRouting),
  multipartInvalid: (data: Record<string, unknown> = {}) => failure('FA_ERR_MULTIPART_INVALID', messages.invalidMultipart, data),
  uploadLimit: (data: Record<string, unknown>) => failure('FA_ERR_UPLOAD_LIMIT', messages.uploadLimitExceeded, upload(data)),
  uploadType: (data: Record<string, unknown>) => failure('FA_ERR_UPLOAD_TYPE', messages.fileTypeNotAllowed, upload(data)),
  uploadMixedKeys: (data: Record<string, unknown>) => failure('FA_ERR_UPLOAD_MIXED_KEYS', messages.mixedKeyTypes, upload(data)),
  uploadFilenameLength: (data: Record<string, unknown>) => failure('FA_ERR_UPLOAD_FILENAME_LENGTH', messages.fileNameTooLong, upload(data)),
  uploadEmptyFile: (data: Record<string, unknown>) => failure('FA_ERR_UPLOAD_EMPTY_FILE', messages.emptyFile, upload(data)),
  uploadTooSmall: (data: Record<string, unknown>) => failure('FA_ERR_UPLOAD_TOO_SMALL', messages.fileTooSmall, upload(data)),
  /** A file name with a control character (NUL, CR, LF, ESC…): never handed to a handler. */
  uploadFilenameInvalid: (data: Record<string, unknown>) => failure('FA_ERR_UPLOAD_FILENAME_INVALID', messages.fileNameInvalid, upload(data)),
  /** A form-data part the parser would drop or misfile (no name, a line break in a name): refused, saying why. */
  multipartPartInvalid: (reason: string) => failure('FA_ERR_MULTIPART_PART_INVALID', messages.multipartPartInvalid(reason), upload({ reason })),
  jsonTooDeep: (max: number) => failure('FA_ERR_JSON_TOO_DEEP', messages.jsonTooDeep(max), { maxDepth: max }),
  underPressure: () => failure('FA_ERR_UNDER_PRESSURE', messages.underPressure),
  /** A streaming action called with an `Accept` header that excludes `text/event-stream`. */
  notAcceptable: (name: string) => failure('FA_ERR_NOT_ACCEPTABLE', messages.streamNotAcceptable(name)),
  tooManyStreams: (max: number) => failure('FA_ERR_TOO_MANY_STREAMS', messages.tooManyStreams(max), { maxPerClient: max }),
  streamDuration: (name: string, ms: number) => failure('FA_ERR_STREAM_DURATION', messages.streamDuration(name, ms)),
  shuttingDown: () => failure('FA_ERR_SHUTTING_DOWN', messages.shuttingDown),
  /** A Host outside `rest.allowedHosts` (DNS rebinding): plugins/hosts.ts. */
  hostNotAllowed: () => failure('FA_ERR_HOST_NOT_ALLOWED', messages.hostNotAllowed),
  /** A guard (`addGuard`) refused the call: its own text, 403. */
  guardRefused: (reason: string) => failure('FA_ERR_GUARD_REFUSED', reason),
  /** An MCP request from a web page whose Origin is neither the server's own nor listed. */
  originNotAllowed: () => failure('FA_ERR_ORIGIN_NOT_ALLOWED', messages.originNotAllowed),
  /** An action with `idempotency: 'required'` called without an `Idempotency-Key` (docs/idempotency.md). */
  idempotencyKeyRequired: (name: string) => failure('FA_ERR_IDEMPOTENCY_KEY_REQUIRED', messages.idempotencyKeyRequired(name), { header: 'Idempotency-Key' }),
  idempotencyKeyInvalid: () => failure('FA_ERR_IDEMPOTENCY_KEY_INVALID', messages.idempotencyKeyInvalid, { header: 'Idempotency-Key' }),
  /** The same key while the first request with it is still running. */
  idempotencyInFlight: () => failure('FA_ERR_IDEMPOTENCY_IN_FLIGHT', messages.idempotencyInFlight),
  /** The same key with another action or input than the request that first used it. */
  idempotencyKeyReused: () => failure('FA_ERR_IDEMPOTENCY_KEY_REUSED', messages.idempotencyKeyReused),
  /** The idempotency store did not answer (Redis down or slow): the action does not run. */
  idempotencyUnavailable: (reason: string) => failure('FA_ERR_IDEMPOTENCY_UNAVAILABLE', messages.idempotencyUnavailable, {}, reason),
} as const

/** Every upload refusal carries `data.error_category: 'validation'` (the specification). */
function upload(data: Record<string, unknown>): Record<string, unknown> {
  return { error_category: 'validation', ...data }
}

/**
 * A thrown error's class: `new ErrConfig(message)` has `code` and `message`. The published
 * declarations name this type, never `createError.FastifyErrorConstructor`: @fastify/error is
 * `export =` CommonJS, and under `moduleResolution: "Bundler"` its default import is a value only,
 * so a declaration that names its namespace fails to compile in a front-end project.
 */
export type CodedErrorClass<C extends string = string, A extends unknown[] = []> = FastifyErrorConstructor<{ code: C }, A>

function codedError<A extends unknown[] = [], C extends string = string>(code: C, message: string): CodedErrorClass<C, A> {
  return createError<C, A>(code, message)
}

// Thrown errors. The texts the specification fixes are kept exactly.
export const ErrEmptyServices = codedError('FA_ERR_EMPTY_SERVICES', messages.emptyServices)
export const ErrDuplicateService = codedError<[string]>('FA_ERR_DUPLICATE_SERVICE', "Duplicate service name '%s'")
export const ErrDuplicateAction = codedError<[string, string]>('FA_ERR_DUPLICATE_ACTION', "Duplicate action name '%s' in service '%s'")
export const ErrUnknownHook = codedError<[string, string]>('FA_ERR_UNKNOWN_HOOK', "Hook '%s' of action '%s' does not exist")
/** A configuration value the framework cannot use; the message names the field (`createServer: rest.x must be …`). */
export const ErrConfig = codedError<[string]>('FA_ERR_CONFIG', '%s')
export const ErrBootFailed = codedError<[string]>('FA_ERR_BOOT_FAILED', 'onBoot failed: %s')
export const ErrBootTimeout = codedError<[number]>('FA_ERR_BOOT_TIMEOUT', 'onBoot timed out after %sms (raise onBoot.maxWaitTime if the start needs longer)')
export const ErrNotInitialized = codedError('FA_ERR_NOT_INITIALIZED', messages.notInitialized)
export const ErrNoLogger = codedError('FA_ERR_NO_LOGGER', messages.noLogger)
export const ErrNoDatabase = codedError<[string]>('FA_ERR_NO_DATABASE', '%s: No database available.')
export const ErrNotATable = codedError('FA_ERR_NOT_A_TABLE', messages.notATable)
export const ErrRelationSchema = codedError('FA_ERR_RELATION_SCHEMA', messages.relationSchema)
export const ErrNoIdColumn = codedError<[string]>('FA_ERR_NO_ID_COLUMN', "createModel: table '%s' has no 'id' column or single-column primary key")
export const ErrNotRegistered = codedError<[string]>(
  'FA_ERR_NOT_REGISTERED',
  "fastify-actions is not registered on this Fastify instance under prefix '%s': await app.register(fastifyActions, config) first",
)
export const ErrSingletonMismatch = codedError(
  'FA_ERR_SINGLETON_MISMATCH',
  'createServer: the existing server has no REST interface but this call asks for one; pass forceNewInstance: true',
)
/** The `reason` of an aborted `context.signal`: the text says why (lib/cancellation.ts). */
export const ErrAborted = codedError<[string]>('FA_ERR_ABORTED', 'Action aborted: %s')
export const ErrStaticDir = codedError<[string, string]>('FA_ERR_STATIC_DIR', "createServer: cannot create staticDir '%s': %s")

/** The classes of thrown errors. */
const thrownClasses = [
  ErrEmptyServices,
  ErrDuplicateService,
  ErrDuplicateAction,
  ErrUnknownHook,
  ErrConfig,
  ErrBootFailed,
  ErrBootTimeout,
  ErrNotInitialized,
  ErrNoLogger,
  ErrNoDatabase,
  ErrNotATable,
  ErrRelationSchema,
  ErrNoIdColumn,
  ErrNotRegistered,
  ErrSingletonMismatch,
  ErrStaticDir,
  ErrAborted,
]

/** The codes of thrown errors (@fastify/error sets `code` on each instance, so one is made to read it). */
export const thrownCodes: readonly string[] = Object.freeze(thrownClasses.map((ErrorClass) => (new (ErrorClass as unknown as new () => { code: string })()).code))

export type ErrorCode = FailureCode | typeof ACTION_FAILED | (string & {})

/** True when `error` is an error thrown by fastify-actions (optionally: with this code). */
export function isActionsError(error: unknown, code?: string): error is Error & { code: string } {
  if (!(error instanceof Error)) return false
  const own = (error as { code?: unknown }).code
  return typeof own === 'string' && own.startsWith('FA_ERR_') && (code === undefined || own === code)
}
