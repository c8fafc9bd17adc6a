import { messages } from './messages.js'
import type { AuthConfig, AuthResult } from './types.js'

/** AuthConfig with its defaults applied, checked once at boot. */
export interface AuthOptions {
  secret: string
  method: 'header' | 'cookie'
  /** Lower-cased, as Node stores request headers. */
  headerName: string
  cookieName: string
  algorithms: string[]
}

export const AUTH_DEFAULTS = {
  method: 'header',
  headerName: 'authorization',
  cookieName: 'auth_token',
  algorithms: ['HS256'],
} as const

export function resolveAuthOptions(config: AuthConfig): AuthOptions {
  if (typeof config.secret !== 'string' || config.secret === '') throw new Error(messages.authNoSecret)
  const method = config.method ?? AUTH_DEFAULTS.method
  if (method !== 'header' && method !== 'cookie') throw new Error(messages.authBadMethod(String(method)))
  const algorithms = config.algorithms ?? [...AUTH_DEFAULTS.algorithms]
  if (!Array.isArray(algorithms) || algorithms.length === 0 || algorithms.includes('none')) {
    throw new Error(messages.authBadAlgorithms)
  }
  return {
    secret: config.secret,
    method,
    headerName: (config.headerName ?? AUTH_DEFAULTS.headerName).toLowerCase(),
    cookieName: config.cookieName ?? AUTH_DEFAULTS.cookieName,
    algorithms,
  }
}

const userIdClaims = ['userId', 'id', 'sub'] as const
const organizationIdClaims = ['organizationId', 'organization_id', 'orgId'] as const

/** The first of `names` that holds a non-empty string or a finite number, as a string. */
function firstClaim(claims: Record<string, unknown>, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = claims[name]
    if (typeof value === 'string' && value !== '') return value
    if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  }
  return undefined
}

/** The identity a verified token carries, or undefined when it names no user. */
export function identityOf(claims: Record<string, unknown>): AuthResult | undefined {
  const userId = firstClaim(claims, userIdClaims)
  if (userId === undefined) return undefined
  const organizationId = firstClaim(claims, organizationIdClaims)
  return organizationId === undefined ? { userId, claims } : { userId, organizationId, claims }
}

// fast-jwt's TokenError codes (what @fastify/jwt's `verify` throws), mapped to the reasons a client sees.
const reasonByCode: Record<string, string> = {
  FAST_JWT_MALFORMED: messages.authReasons.malformed,
  FAST_JWT_INVALID_TYPE: messages.authReasons.malformed,
  FAST_JWT_INVALID_PAYLOAD: messages.authReasons.malformed,
  FAST_JWT_MISSING_SIGNATURE: messages.authReasons.unsigned,
  FAST_JWT_INVALID_ALGORITHM: messages.authReasons.algorithm,
  FAST_JWT_INVALID_SIGNATURE: messages.authReasons.signature,
  FAST_JWT_EXPIRED: messages.authReasons.expired,
  FAST_JWT_INACTIVE: messages.authReasons.notYetValid,
}

/** Why a token failed verification, in words safe to send to the client. */
export function verificationFailureReason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  return (typeof code === 'string' && reasonByCode[code]) || messages.authReasons.invalid
}
