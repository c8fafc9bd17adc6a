import { declarationOf, declaredData, type CompiledError, type DeclaredFailure } from './declared-errors.js'
import { errorEnvelope, isPlainObject, toJson, type ExternalResponse } from './envelope.js'
import { ACTION_FAILED, codeOf, fail, isFailure, type Failure, type FailureCode } from './errors.js'
import { messages } from './messages.js'
import type { CompiledAction } from './registry.js'

/** The JSON Schema of a success envelope's `data` for an output schema: for the documents that describe the wire. */
export { dataSchemaOf } from './output.js'
import type { Result } from './result.js'

/*
 * The wire codec: the one place where an engine result becomes what goes out, whichever way out
 * carries it (the JSON answer and per-action routes, a stream's `done`/`error` frame, an MCP tool
 * result). It knows no HTTP library: it says which status, which envelope, the text a compiled
 * serializer wrote, and whether the answer is a server fault to log.
 */

/** The HTTP status of every failure code: the one place where a failure becomes a status. */
export const statusByCode: Readonly<Record<FailureCode | typeof ACTION_FAILED, number>> = Object.freeze({
  [ACTION_FAILED]: 400,
  FA_ERR_INVALID_BODY: 400,
  FA_ERR_INVALID_REQUEST: 400,
  FA_ERR_WILDCARD_EXECUTE: 400,
  FA_ERR_SERVICE_NOT_FOUND: 400,
  FA_ERR_ACTION_NOT_FOUND: 400,
  FA_ERR_VALIDATION: 400,
  FA_ERR_HOOK_FAILED: 400,
  FA_ERR_ACTION_TIMEOUT: 504,
  FA_ERR_NOT_A_RESULT: 500,
  FA_ERR_OUTPUT_MISMATCH: 500,
  FA_ERR_INTERNAL: 500,
  FA_ERR_AUTH: 401,
  FA_ERR_DISCOVERY_DISABLED: 403,
  FA_ERR_DISCOVERY_SECRET: 403,
  FA_ERR_UNSUPPORTED_MEDIA_TYPE: 415,
  FA_ERR_BODY_TOO_LARGE: 413,
  FA_ERR_ROUTE_NOT_FOUND: 404,
  FA_ERR_RATE_LIMITED: 429,
  FA_ERR_BAD_URL: 400,
  FA_ERR_BAD_REQUEST: 400,
  FA_ERR_REQUEST_TIMEOUT: 408,
  FA_ERR_HEADERS_TOO_LARGE: 431,
  FA_ERR_MULTIPART_ROUTING: 400,
  FA_ERR_MULTIPART_INVALID: 400,
  FA_ERR_UPLOAD_LIMIT: 400,
  FA_ERR_UPLOAD_TYPE: 400,
  FA_ERR_UPLOAD_MIXED_KEYS: 400,
  FA_ERR_UPLOAD_FILENAME_LENGTH: 400,
  FA_ERR_UPLOAD_EMPTY_FILE: 400,
  FA_ERR_UPLOAD_TOO_SMALL: 400,
  FA_ERR_UPLOAD_FILENAME_INVALID: 400,
  FA_ERR_MULTIPART_PART_INVALID: 400,
  FA_ERR_JSON_TOO_DEEP: 400,
  FA_ERR_UNDER_PRESSURE: 503,
  FA_ERR_NOT_ACCEPTABLE: 406,
  FA_ERR_TOO_MANY_STREAMS: 429,
  FA_ERR_STREAM_DURATION: 504,
  FA_ERR_SHUTTING_DOWN: 503,
  FA_ERR_HOST_NOT_ALLOWED: 403,
  FA_ERR_GUARD_REFUSED: 403,
  FA_ERR_ORIGIN_NOT_ALLOWED: 403,
  FA_ERR_IDEMPOTENCY_KEY_REQUIRED: 400,
  FA_ERR_IDEMPOTENCY_KEY_INVALID: 400,
  FA_ERR_IDEMPOTENCY_IN_FLIGHT: 409,
  FA_ERR_IDEMPOTENCY_KEY_REUSED: 422,
  FA_ERR_IDEMPOTENCY_UNAVAILABLE: 503,
})

/** The HTTP status of a Result: 200 for Ok, its code's status for a failure, the declared one for a declared error, 400 for a handler's `Err`. */
export function statusOf(result: Result<unknown, string>): number {
  if (result.ok) return 200
  if (isFailure(result)) return statusByCode[result.code]
  return declarationOf(result)?.status ?? statusByCode[ACTION_FAILED]
}

/** The envelope's `data` of any `Err`: a framework failure's own, `{ code, ...data }` for a declared error, else `{}`. */
export function failureData(result: Result<unknown, string> & { ok: false }): Record<string, unknown> {
  if (isFailure(result)) return result.data
  return declarationOf(result) ? declaredData(result as DeclaredFailure) : {}
}

/**
 * Maps an action's Result onto the envelope: objects become `data`, anything else `data.result`. A
 * failure's `data` is the framework failure's own, `{ code, ...data }` for a declared error, else `{}`.
 */
export function toExternalResponse(result: Result<unknown, string>, service: string, action: string): ExternalResponse {
  if (!result.ok) return errorEnvelope(result.error, failureData(result))
  const value = result.value
  return { status: true, message: messages.executed(service, action), data: isPlainObject(value) ? value : { result: value } }
}

/** A server fault: what to log (at error level) beside the answer. */
export interface Fault {
  readonly code: string
  /** `service.action` */
  readonly action: string
  readonly message: string
}

/** One result as it goes out, on every surface. */
export interface WireAnswer {
  readonly status: number
  readonly envelope: ExternalResponse
  /**
   * The envelope as JSON text when a compiled serializer wrote it (an `output` schema, a declared
   * error): only declared fields, never invalid JSON; or, when the caller asked for the text
   * (`answerOf(…, true)`: the JSON endpoint), a success envelope's `toJson` text. Undefined: any
   * JSON writer (`toJson`) writes the envelope.
   */
  readonly json?: string
  /** The declared error answered, when it is one. */
  readonly declared?: CompiledError
  /** Set for a server fault (status 500 and up, a value its schema cannot write): log it. */
  readonly fault?: Fault
}

/** Where a fault is logged: Fastify's request logger (pino) fits. */
export interface FaultLogger {
  error(fields: { code: string; action: string }, message: string): void
}

/** Logs a fault as the JSON endpoint always has: `{ code, action }` and the detail behind the 500. */
export function logFault(log: FaultLogger, fault: Fault | undefined): void {
  if (fault) log.error({ code: fault.code, action: fault.action }, fault.message)
}

const faultOf = (result: Result<unknown, string> & { ok: false }, action: string): Fault => ({
  code: codeOf(result),
  action,
  message: isFailure(result) ? (result.detail ?? result.error) : result.error,
})

/** A result its schema cannot write (a mismatch, a value JSON cannot carry): the logged 500, nothing of the value sent. */
function unwritable(failure: Failure, action: string): WireAnswer {
  return { status: 500, envelope: errorEnvelope(failure.error, failure.data), fault: faultOf(failure, action) }
}

/**
 * The codec: an engine result and the action's table entry (undefined when the lookup failed, whose
 * answer is its 400) to the answer every surface sends. An `Ok` of an action with an `output` schema
 * and a declared error go through their compiled serializer; declared data that does not match its
 * schema and a value the serializer cannot write answer the logged 500. `text`: the caller sends
 * JSON text (the HTTP endpoint), so a success without a serializer comes with its text too.
 */
export function answerOf(result: Result<unknown, string>, entry: CompiledAction | undefined, text = false): WireAnswer {
  const name = entry?.name ?? ''
  if (result.ok) {
    // `toExternalResponse`'s envelope, with the entry's message made once at boot.
    const value = result.value
    const envelope = { status: true, message: entry ? entry.executed : messages.executed('', ''), data: isPlainObject(value) ? value : { result: value } }
    if (!entry?.serialize) return text && entry ? { status: 200, envelope, json: envelopeText(entry.executedHead, envelope) } : { status: 200, envelope }
    try {
      return { status: 200, envelope, json: entry.serialize(envelope) }
    } catch (error) {
      return unwritable(fail.outputMismatch(name, (error as Error).message), name)
    }
  }
  const declared = declarationOf(result)
  if (declared) return declaredAnswer(result as DeclaredFailure, declared, name)
  const status = isFailure(result) ? statusByCode[result.code] : statusByCode[ACTION_FAILED]
  const envelope = errorEnvelope(result.error, isFailure(result) ? result.data : {})
  return status >= 500 ? { status, envelope, fault: faultOf(result, name) } : { status, envelope }
}

/**
 * `toJson(envelope)` of a success envelope, from the action's head made at boot and the data's JSON:
 * the same bytes without writing the envelope's keys and message on every answer (about 0.3 µs of a
 * request, docs/benchmarks.md "Round 8"). Undefined, so that the envelope is written whole as before,
 * when the data has a `toJSON` of its own (it is called with the key `data` there, `""` here) or
 * cannot be written (a throwing getter, a cycle: the reply serializer meets it as it always did).
 */
function envelopeText(head: string, envelope: { data: Record<string, unknown> }): string | undefined {
  const data = envelope.data
  if (typeof data.toJSON === 'function') return undefined
  try {
    const json = toJson(data)
    return json === undefined ? undefined : `${head}${json}}`
  } catch {
    return undefined
  }
}

/** A declared error: its data checked against its schema, then written through its serializer. */
function declaredAnswer(result: DeclaredFailure, declared: CompiledError, name: string): WireAnswer {
  const mismatch = declared.check(result.data)
  if (mismatch !== undefined) return unwritable(fail.errorDataMismatch(name, declared.code, mismatch), name)
  const envelope = errorEnvelope(result.error, declaredData(result))
  let json: string
  try {
    json = declared.serialize(envelope)
  } catch (error) {
    return unwritable(fail.errorDataMismatch(name, declared.code, (error as Error).message), name)
  }
  const answer = { status: declared.status, envelope, json, declared }
  return declared.status >= 500 ? { ...answer, fault: faultOf(result, name) } : answer
}
