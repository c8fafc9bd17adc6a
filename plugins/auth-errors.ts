import { fail, type Failure } from '../lib/errors.js'
import { messages } from '../lib/messages.js'

/*
 * What a JWT error means to a client. Apart from plugins/auth.ts (which loads @fastify/jwt and
 * @fastify/cookie, only when `auth` is set), so the error envelope can recognise a JWT error
 * without loading either.
 */

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
  // auth.verify: a claim outside allowedAud / allowedIss / allowedSub, or a required claim absent.
  FAST_JWT_INVALID_CLAIM_VALUE: messages.authReasons.claimRefused,
  FAST_JWT_INVALID_CLAIM_TYPE: messages.authReasons.claimRefused,
  FAST_JWT_MISSING_REQUIRED_CLAIM: messages.authReasons.claimMissing,
  // What `request.jwtVerify()` throws in a custom route.
  FST_JWT_NO_AUTHORIZATION_IN_HEADER: messages.authReasons.missingToken,
  FST_JWT_NO_AUTHORIZATION_IN_COOKIE: messages.authReasons.missingToken,
  FST_JWT_BAD_REQUEST: messages.authReasons.missingToken,
  FST_JWT_BAD_COOKIE_REQUEST: messages.authReasons.missingToken,
  FST_JWT_AUTHORIZATION_TOKEN_EXPIRED: messages.authReasons.expired,
  FST_JWT_AUTHORIZATION_TOKEN_INVALID: messages.authReasons.invalid,
  FST_JWT_AUTHORIZATION_TOKEN_UNTRUSTED: messages.authReasons.invalid,
}

/** Why a token failed verification, in words safe to send to the client. */
export function verificationFailureReason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  return (typeof code === 'string' && reasonByCode[code]) || messages.authReasons.invalid
}

/** The 401 failure of a JWT error thrown by @fastify/jwt (e.g. `request.jwtVerify()` in a custom route); undefined for any other error. */
export function authFailureOf(error: unknown): Failure | undefined {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code !== 'string' || !(code.startsWith('FST_JWT_') || code.startsWith('FAST_JWT_'))) return undefined
  return fail.auth(verificationFailureReason(error))
}
