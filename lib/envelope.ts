
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
