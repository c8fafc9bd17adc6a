// The server's `{ status, message, data }` envelope as the client reads it.

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

