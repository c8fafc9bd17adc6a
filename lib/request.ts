import { isPlainObject, type ExternalRequest, type Intent } from './envelope.js'
import type { ValidationIssue } from './validation.js'

const intents: ReadonlySet<string> = new Set<Intent>(['explore', 'execute', 'schema'])

/** Checks a parsed body against ExternalRequest; returns the issues, or none. */
export function checkExternalRequest(body: unknown): ValidationIssue[] | null {
  if (!isPlainObject(body)) return [{ path: '', message: 'must be an object' }]
  const errors: ValidationIssue[] = []
  if (typeof body.intent !== 'string' || !intents.has(body.intent)) {
    errors.push({ path: '/intent', message: "must be one of 'explore', 'execute', 'schema'" })
  }
  if (typeof body.service !== 'string') errors.push({ path: '/service', message: 'must be a string' })
  if (typeof body.action !== 'string') errors.push({ path: '/action', message: 'must be a string' })
  if (!isPlainObject(body.payload)) errors.push({ path: '/payload', message: 'must be an object' })
  return errors.length === 0 ? null : errors
}

export function isExternalRequest(body: unknown): body is ExternalRequest {
  return checkExternalRequest(body) === null
}
