// The server's `{ status, message, data }` envelope as the client reads it.
import { clientError, clientErrorCodes, clientMessages, type ClientError } from './errors.js'
import { Err, Ok } from './result.js'
import type { ClientResult } from './types.js'

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

export type Envelope = { status: boolean; message: string; data: Record<string, unknown>; code?: unknown }

export function isEnvelope(value: unknown): value is Envelope {
  return isObject(value) && typeof value.status === 'boolean' && typeof value.message === 'string' && isObject(value.data)
}

/** The envelope sends a non-object Ok value as `data: { result }`: hand back the value itself. */
export function unwrap(data: Record<string, unknown>): unknown {
  const keys = Object.keys(data)
  return keys.length === 1 && keys[0] === 'result' && !isObject(data.result) ? data.result : data
}

/** A failure's envelope as the client's error. A declared error (`Fail`) sends its code in `data` (`{ code: 'NOT_FOUND', ... }`): it becomes the error's code. */
export function envelopeError(envelope: Envelope, httpStatus: number): ClientError {
  const error: ClientError = { status: false, message: envelope.message, data: envelope.data, httpStatus }
  if (typeof envelope.code === 'string') error.code = envelope.code
  else if (typeof envelope.data.code === 'string') error.code = envelope.data.code
  return error
}

/** An answer's text as a Result: the envelope's data, or its error, or why it is no envelope. */
export function toResult(response: Response, text: string, unwrapValue: boolean): ClientResult<unknown> {
  const httpStatus = response.status
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return Err(clientError(clientErrorCodes.badResponse, clientMessages.notJson(httpStatus), httpStatus, text))
  }
  if (!isEnvelope(body)) {
    return Err(clientError(clientErrorCodes.badResponse, clientMessages.notEnvelope(httpStatus), httpStatus, body))
  }
  if (body.status && response.ok) return Ok(unwrapValue ? unwrap(body.data) : body.data)
  return Err(envelopeError(body, httpStatus))
}
