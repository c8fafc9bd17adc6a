import type { Result } from './result.js'
import { declarationOf, declaredData, type DeclaredFailure } from './declared-errors.js'
import { isFailure } from './errors.js'
import { messages } from './messages.js'

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

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/**
 * Maps an action's Result onto the envelope: objects become `data`, anything else `data.result`. A
 * failure's `data` is the framework failure's own, `{ code, ...data }` for a declared error, else `{}`.
 */
export function toExternalResponse(result: Result<unknown, string>, service: string, action: string): ExternalResponse {
  if (!result.ok) return errorEnvelope(result.error, failureData(result))
  const value = result.value
  return {
    status: true,
    message: messages.executed(service, action),
    data: isPlainObject(value) ? value : { result: value },
  }
}

/** The envelope's `data` of any `Err`. */
export function failureData(result: Result<unknown, string> & { ok: false }): Record<string, unknown> {
  if (isFailure(result)) return result.data
  return declarationOf(result) ? declaredData(result as DeclaredFailure) : {}
}

export function success(message: string, data: Record<string, unknown> = {}): ExternalResponse {
  return { status: true, message, data }
}

export function errorEnvelope(message: string, data: Record<string, unknown> = {}): ExternalResponse {
  return { status: false, message, data }
}

/**
 * JSON text of a value. JSON has no BigInt (a bigint column, a counter): it is written as a string
 * instead of failing. `undefined` gives undefined, as `JSON.stringify` does.
 */
export function toJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value)
  } catch (error) {
    if (!(error instanceof TypeError) || !/BigInt/i.test(error.message)) throw error
    return JSON.stringify(value, (_key, item) => (typeof item === 'bigint' ? item.toString() : item))
  }
}
