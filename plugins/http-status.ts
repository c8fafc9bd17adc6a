import type { FastifyReply } from 'fastify'
import { declarationOf } from '../lib/declared-errors.js'
import { errorEnvelope, failureData, type ExternalResponse } from '../lib/envelope.js'
import { ACTION_FAILED, isFailure, type Failure, type FailureCode } from '../lib/errors.js'
import type { ErrResult, Result } from '../lib/result.js'

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
  FA_ERR_ORIGIN_NOT_ALLOWED: 403,
})

/** The HTTP status of a Result: 200 for Ok, its code's status for a failure, the declared one for a declared error, 400 for a handler's `Err`. */
export function statusOf(result: Result<unknown, string>): number {
  if (result.ok) return 200
  if (isFailure(result)) return statusByCode[result.code]
  return declarationOf(result)?.status ?? statusByCode[ACTION_FAILED]
}

/** Thrown from a hook (the rate limiter's 429): the error handler answers the failure it carries. */
export class FailureError extends Error {
  constructor(readonly failure: Failure) {
    super(failure.error)
  }
}

/** Answers an `Err` with its status and its envelope (a handler's own `Err`: 400, `data: {}`). */
export function sendFailure(reply: FastifyReply, failure: ErrResult<string>): FastifyReply {
  return reply.send(failureAnswer(reply, failure))
}

/** Sets a failure's status and returns its envelope, for a handler that hands its answer back to Fastify. */
export function failureAnswer(reply: FastifyReply, failure: ErrResult<string>): ExternalResponse {
  reply.code(statusOf(failure))
  return errorEnvelope(failure.error, failureData(failure))
}
