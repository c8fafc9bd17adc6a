import { isPlainObject, type ExternalRequest, type Intent } from './envelope.js'
import type { ValidationIssue } from './validation.js'

const intents: ReadonlySet<string> = new Set<Intent>(['explore', 'execute', 'schema'])

/** Checks a parsed body against ExternalRequest; returns the issues, or none. */
export function checkExternalRequest(body: unknown): ValidationIssue[] | null {
  if (!isPlainObject(body)) return [{ path: '', message: 'must be an object' }]
  const intentOk = typeof body.intent === 'string' && intents.has(body.intent)
  const serviceOk = typeof body.service === 'string'
  const actionOk = typeof body.action === 'string'
  const payloadOk = isPlainObject(body.payload)
  // The well-formed request, every call: no list made.
  if (intentOk && serviceOk && actionOk && payloadOk) return null
  const errors: ValidationIssue[] = []
  if (!intentOk) errors.push({ path: '/intent', message: "must be one of 'explore', 'execute', 'schema'" })
  if (!serviceOk) errors.push({ path: '/service', message: 'must be a string' })
  if (!actionOk) errors.push({ path: '/action', message: 'must be a string' })
  if (!payloadOk) errors.push({ path: '/payload', message: 'must be an object' })
  return errors
}

export function isExternalRequest(body: unknown): body is ExternalRequest {
  return checkExternalRequest(body) === null
}
