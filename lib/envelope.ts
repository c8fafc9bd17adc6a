import type { Result } from './result.js'
import type { ExternalResponse } from './types.js'
import { messages } from './messages.js'
import { isFailure } from './engine.js'

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** Maps an action's Result onto the envelope: objects become `data`, anything else `data.result`. */
export function toExternalResponse(result: Result<unknown, string>, service: string, action: string): ExternalResponse {
  if (!result.ok) return failure(result.error, dataOf(result))
  const value = result.value
  return {
    status: true,
    message: messages.executed(service, action),
    data: isPlainObject(value) ? value : { result: value },
  }
}

/** The HTTP status of a Result: 200 for Ok, the Failure's own status, else 400. */
export function statusOf(result: Result<unknown, string>): number {
  if (result.ok) return 200
  return isFailure(result) ? result.status : 400
}

export function success(message: string, data: Record<string, unknown> = {}): ExternalResponse {
  return { status: true, message, data }
}

export function failure(message: string, data: Record<string, unknown> = {}): ExternalResponse {
  return { status: false, message, data }
}

function dataOf(result: object): Record<string, unknown> {
  return isFailure(result) ? result.data : {}
}
