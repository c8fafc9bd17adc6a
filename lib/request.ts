import { isPlainObject, type ExternalRequest, type Intent } from './envelope.js'
import type { ValidationIssue } from './validation.js'

const intents: ReadonlySet<string> = new Set<Intent>(['explore', 'execute', 'schema'])

/** Checks a parsed body against ExternalRequest; returns the issues, or none. */
export function checkExternalRequest(body: unknown): ValidationIssue[] | null {
  if (!isPlainObject(body)) return [{ path: '', message: 'must be an object' }]
  const { intent, service, action, payload } = body
  // The well-formed request, every call: no list made.
  if (typeof intent === 'string' && intents.has(intent) && typeof service === 'string' && typeof action === 'string' && isPlainObject(payload)) return null
  const errors: ValidationIssue[] = []
  if (typeof intent !== 'string' || !intents.has(intent)) {
    errors.push({ path: '/intent', message: "must be one of 'explore', 'execute', 'schema'" })
  }
  if (typeof service !== 'string') errors.push({ path: '/service', message: 'must be a string' })
  if (typeof action !== 'string') errors.push({ path: '/action', message: 'must be a string' })
  if (!isPlainObject(payload)) errors.push({ path: '/payload', message: 'must be an object' })
  return errors
}

export function isExternalRequest(body: unknown): body is ExternalRequest {
  return checkExternalRequest(body) === null
}
