import type { CookieSerializeOptions } from '@fastify/cookie'
import type { SignOptions } from '@fastify/jwt'
import type { FastifyInstance } from 'fastify'
import type { AuthOptions } from '../lib/auth.js'
import { getRequestStore } from '../lib/context.js'
import { Err, Ok, type Result } from '../lib/result.js'

/** The texts of `signToken` and `clearTokenCookie` (kept here until they join lib/messages.ts). */
export const tokenMessages = {
  noRequest: 'signToken: no HTTP request in scope; call it inside an action executed over REST',
  noAuth: 'signToken: authentication is not configured (config.auth)',
  verifyOnly: 'signToken: auth.secret is a public key, which can verify tokens but not sign them',
  noCookies: "signToken: setting a cookie needs auth.method 'cookie'",
} as const

export interface SignTokenOptions {
  /** Lifetime: milliseconds, or a text such as `'1h'` or `'7d'`. None by default (the token never expires). */
  expiresIn?: number | string
  /** Other @fastify/jwt sign options (`notBefore`, `jti`, `aud`, …). */
  sign?: Partial<Omit<SignOptions, 'expiresIn'>>
  /**
   * Also set the token as the auth cookie (`auth.cookieName`, with `auth.method: 'cookie'`):
   * `true` for HttpOnly, SameSite=Lax, Path=/, Secure over HTTPS; an object overrides those.
   */
  cookie?: boolean | CookieSerializeOptions
}

interface Issuer {
  cookieName: string
  method: AuthOptions['method']
  canSign: boolean
}

// Keyed by the `jwt` decorator, which every child instance of the app shares.
const issuers = new WeakMap<object, Issuer>()

/** Called by the auth plugin once @fastify/jwt is registered. */
export function registerTokenIssuer(app: FastifyInstance, options: AuthOptions): void {
  issuers.set(app.jwt, {
    cookieName: options.cookieName,
    method: options.method,
    canSign: options.algorithms.every((algorithm) => algorithm.startsWith('HS')),
  })
}

function currentIssuer(): { issuer: Issuer; jwt: FastifyInstance['jwt']; rest: NonNullable<ReturnType<typeof getRequestStore>>['rest'] } | string {
  const rest = getRequestStore()?.rest
  if (!rest) return tokenMessages.noRequest
  const jwt = (rest.req.server as Partial<FastifyInstance>).jwt
  const issuer = jwt ? issuers.get(jwt) : undefined
  if (!jwt || !issuer) return tokenMessages.noAuth
  return { issuer, jwt, rest }
}

/**
 * Issues a JWT for the current request's server, signed by @fastify/jwt with `auth.secret`, from
 * inside an action executed over REST (a login action). Put the user id in `sub`, `userId` or `id`:
 * protected actions then accept it. Optionally sets it as the auth cookie too.
 */
export function signToken(claims: Record<string, unknown>, options: SignTokenOptions = {}): Result<string, string> {
  const found = currentIssuer()
  if (typeof found === 'string') return Err(found)
  const { issuer, jwt, rest } = found
  if (!issuer.canSign) return Err(tokenMessages.verifyOnly)
  if (options.cookie && (issuer.method !== 'cookie' || typeof rest!.reply.setCookie !== 'function')) return Err(tokenMessages.noCookies)
  const signOptions: Partial<SignOptions> = { ...options.sign }
  if (options.expiresIn !== undefined) signOptions.expiresIn = options.expiresIn
  const token = jwt.sign(claims, signOptions)
  if (options.cookie) {
    rest!.reply.setCookie(issuer.cookieName, token, {
      httpOnly: true,
      sameSite: 'lax',
      path: '/',
      secure: rest!.req.protocol === 'https',
      ...(typeof options.cookie === 'object' ? options.cookie : {}),
    })
  }
  return Ok(token)
}

/** Clears the auth cookie (a logout action); Ok even when there was none. */
export function clearTokenCookie(options: CookieSerializeOptions = {}): Result<null, string> {
  const found = currentIssuer()
  if (typeof found === 'string') return Err(found)
  if (found.issuer.method !== 'cookie') return Err(tokenMessages.noCookies)
  found.rest!.reply.clearCookie(found.issuer.cookieName, { path: '/', ...options })
  return Ok(null)
}
