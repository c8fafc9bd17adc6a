import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { JWT } from '@fastify/jwt'
import { getRequestStore } from '../lib/context.js'
import { messages } from '../lib/messages.js'
import { Err, Ok, type Result } from '../lib/result.js'
import type { ResolvedAuth } from './auth-config.js'
import { hostnameOf, isLoopbackHost } from './hosts.js'
import { expiresInProblem } from '../lib/token-lifetime.js'
import type { RestRequestContext } from './request-scope.js'

/** Cookie attributes for `signToken({ cookie })` (those of @fastify/cookie, written out so no plugin types leak into yours). */
export interface TokenCookieOptions {
  httpOnly?: boolean
  secure?: boolean
  sameSite?: boolean | 'lax' | 'strict' | 'none'
  path?: string
  domain?: string
  /** Seconds. */
  maxAge?: number
  expires?: Date
}

export interface SignTokenOptions {
  /**
   * Lifetime, as @fastify/jwt takes it: a number of **seconds** (`8 * 3600`), or a duration such as
   * `'15m'`, `'8h'` or `'7d'`. Over a year is refused (a number of milliseconds, by mistake).
   * Default `auth.expiresIn` ('1h').
   */
  expiresIn?: number | string
  /** Other claims options of @fastify/jwt's `sign` (`notBefore`, `jti`, `aud`, `iss`, `sub`, …). */
  sign?: Record<string, unknown>
  /**
   * Also set the token as the auth cookie (`auth.cookieName`, with `auth.method: 'cookie'`):
   * `true` for HttpOnly, SameSite=Lax, Path=/, and Secure unless the request is plain HTTP to a
   * loopback host (`auth.cookie.secure` decides when set); an object overrides those.
   */
  cookie?: boolean | TokenCookieOptions
}

/** A single string of `allowedAud` / `allowedIss`: what the server's own tokens are signed with. */
function single(value: unknown): string | undefined {
  if (typeof value === 'string') return value
  return Array.isArray(value) && value.length === 1 && typeof value[0] === 'string' ? value[0] : undefined
}

/**
 * The sign options of a token the server issues: `auth.expiresIn` unless the call names a lifetime
 * or the claims an `exp`, and the `aud` / `iss` that `auth.verify` checks (a single string) unless
 * the claims or the call name their own. (Given to @fastify/jwt as registration defaults instead,
 * they would override the claims: fast-jwt puts option claims over the payload's.)
 */
export function withSignDefaults(auth: ResolvedAuth, claims: Record<string, unknown>, options: Record<string, unknown>): Record<string, unknown> {
  const signed: Record<string, unknown> = { ...options }
  if (signed.expiresIn === undefined && claims.exp === undefined) signed.expiresIn = auth.expiresIn
  const aud = single(auth.verify?.allowedAud)
  const iss = single(auth.verify?.allowedIss)
  if (aud !== undefined && claims.aud === undefined && signed.aud === undefined) signed.aud = aud
  if (iss !== undefined && claims.iss === undefined && signed.iss === undefined) signed.iss = iss
  return signed
}

interface Issuer {
  cookieName: string
  method: ResolvedAuth['method']
  canSign: boolean
  /** `auth.cookie.secure`; undefined for the default rule. */
  cookieSecure?: boolean
  auth: ResolvedAuth
}

// Keyed by the `jwt` decorator of a registration, which its child contexts share.
const issuers = new WeakMap<object, Issuer>()
// Keyed by the registration's context: its jwt may sit in a namespace of the host app's (plugins/auth.ts).
const byContext = new WeakMap<object, { issuer: Issuer; jwt: JWT }>()

/** Called by the auth setup once @fastify/jwt is registered. */
/** `jwt` is the registration's own (namespaced in a host with @fastify/jwt). */
export function registerTokenIssuer(app: FastifyInstance, auth: ResolvedAuth, jwt: JWT = app.jwt, context?: object): void {
  const issuer: Issuer = {
    cookieName: auth.cookieName,
    method: auth.method,
    canSign: auth.algorithms.every((algorithm) => algorithm.startsWith('HS')),
    cookieSecure: auth.cookieSecure,
    auth,
  }
  issuers.set(jwt, issuer)
  if (context) byContext.set(context, { issuer, jwt })
}

/**
 * `Secure` unless the request is plain HTTP to a loopback host (local development): behind a TLS
 * proxy without `trustProxy` the request looks like plain HTTP, and the cookie must still be Secure.
 */
function secureCookie(issuer: Issuer, request: FastifyRequest): boolean {
  if (issuer.cookieSecure !== undefined) return issuer.cookieSecure
  if (request.protocol === 'https') return true
  const hostname = hostnameOf(request.host ?? '')
  return hostname === undefined || !isLoopbackHost(hostname)
}

/** Why a cookie cannot be set on this request's answer (an MCP tool call: the SDK writes the answer), or undefined. */
function cookieProblem(issuer: Issuer, rest: RestRequestContext): string | undefined {
  if (issuer.method === 'header' || typeof rest.reply.setCookie !== 'function') return messages.tokenNoCookies
  return rest.reply.sent ? messages.tokenCookieNoReply : undefined
}

function currentIssuer(): { issuer: Issuer; jwt: JWT; rest: RestRequestContext } | string {
  const store = getRequestStore()
  const rest = store?.rest as RestRequestContext | undefined
  if (!rest) return messages.tokenNoRequest
  const own = store?.context ? byContext.get(store.context) : undefined
  if (own) return { ...own, rest }
  const jwt = (rest.req.server as Partial<FastifyInstance>).jwt
  const issuer = jwt ? issuers.get(jwt) : undefined
  if (!jwt || !issuer) return messages.tokenNoAuth
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
  if (!issuer.canSign) return Err(messages.tokenVerifyOnly)
  const problem = options.cookie ? cookieProblem(issuer, rest) : undefined
  if (problem) return Err(problem)
  const signOptions: Record<string, unknown> = { ...options.sign }
  if (options.expiresIn !== undefined) {
    const lifetime = expiresInProblem(options.expiresIn)
    if (lifetime) return Err(`signToken: ${lifetime}`)
    signOptions.expiresIn = options.expiresIn
  }
  const token = jwt.sign(claims, withSignDefaults(issuer.auth, claims, signOptions))
  if (options.cookie) {
    rest.reply.setCookie(issuer.cookieName, token, {
      httpOnly: true,
      sameSite: 'lax',
      path: '/',
      secure: secureCookie(issuer, rest.req),
      ...(typeof options.cookie === 'object' ? options.cookie : {}),
    })
  }
  return Ok(token)
}

/** Clears the auth cookie (a logout action); Ok even when there was none. */
export function clearTokenCookie(options: TokenCookieOptions = {}): Result<null, string> {
  const found = currentIssuer()
  if (typeof found === 'string') return Err(found)
  const problem = cookieProblem(found.issuer, found.rest)
  if (problem) return Err(problem)
  found.rest.reply.clearCookie(found.issuer.cookieName, { path: '/', ...options })
  return Ok(null)
}
