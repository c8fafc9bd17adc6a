import type { FastifyInstance } from 'fastify'
import { getRequestStore } from '../lib/context.js'
import { messages } from '../lib/messages.js'
import { Err, Ok, type Result } from '../lib/result.js'
import type { ResolvedAuth } from './config.js'
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
   * None by default (the token never expires).
   */
  expiresIn?: number | string
  /** Other claims options of @fastify/jwt's `sign` (`notBefore`, `jti`, `aud`, `iss`, `sub`, …). */
  sign?: Record<string, unknown>
  /**
   * Also set the token as the auth cookie (`auth.cookieName`, with `auth.method: 'cookie'`):
   * `true` for HttpOnly, SameSite=Lax, Path=/, Secure over HTTPS; an object overrides those.
   */
  cookie?: boolean | TokenCookieOptions
}

/** A year in seconds: a longer lifetime is a mistake (milliseconds for seconds), refused. */
const MAX_EXPIRES_IN = 365 * 24 * 3600

// The duration texts @fastify/jwt (fast-jwt, through `ms`) accepts, and their length in seconds.
const DURATION = /^(\d*\.?\d+) *(milliseconds?|msecs?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|w|years?|yrs?|y)?$/i
const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400, w: 604_800, y: 31_557_600 }

function unitSeconds(unit: string | undefined): number {
  if (!unit) return 0.001 // a bare number in a text is milliseconds in `ms`
  const u = unit.toLowerCase()
  if (u.startsWith('ms') || u.startsWith('msec') || u.startsWith('milli')) return UNIT_SECONDS.ms!
  return UNIT_SECONDS[u[0]!]!
}

/**
 * Checks a token lifetime before it is signed: a positive number of seconds or a duration text, at
 * most a year. Returns the message of a refusal, or undefined.
 */
export function expiresInProblem(value: unknown): string | undefined {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value <= 0) return messages.tokenExpiresInInvalid(String(value))
    return value > MAX_EXPIRES_IN ? messages.tokenExpiresInTooLong(String(value)) : undefined
  }
  const found = typeof value === 'string' ? DURATION.exec(value.trim()) : null
  if (!found) return messages.tokenExpiresInInvalid(JSON.stringify(value))
  const seconds = Number(found[1]) * unitSeconds(found[2])
  if (!(seconds > 0)) return messages.tokenExpiresInInvalid(JSON.stringify(value))
  return seconds > MAX_EXPIRES_IN ? messages.tokenExpiresInTooLong(JSON.stringify(value)) : undefined
}

interface Issuer {
  cookieName: string
  method: ResolvedAuth['method']
  canSign: boolean
}

// Keyed by the `jwt` decorator of a registration, which its child contexts share.
const issuers = new WeakMap<object, Issuer>()
// Keyed by the registration's context: its jwt may sit in a namespace of the host app's (plugins/auth.ts).
const byContext = new WeakMap<object, { issuer: Issuer; jwt: FastifyInstance['jwt'] }>()

/** Called by the auth setup once @fastify/jwt is registered; `jwt` is the registration's own (namespaced in a host with @fastify/jwt). */
export function registerTokenIssuer(app: FastifyInstance, auth: ResolvedAuth, jwt: FastifyInstance['jwt'] = app.jwt, context?: object): void {
  const issuer = { cookieName: auth.cookieName, method: auth.method, canSign: auth.algorithms.every((algorithm) => algorithm.startsWith('HS')) }
  issuers.set(jwt, issuer)
  if (context) byContext.set(context, { issuer, jwt })
}

function currentIssuer(): { issuer: Issuer; jwt: FastifyInstance['jwt']; rest: RestRequestContext } | string {
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
  if (options.cookie && (issuer.method === 'header' || typeof rest.reply.setCookie !== 'function')) return Err(messages.tokenNoCookies)
  const signOptions: Record<string, unknown> = { ...options.sign }
  if (options.expiresIn !== undefined) {
    const problem = expiresInProblem(options.expiresIn)
    if (problem) return Err(`signToken: ${problem}`)
    signOptions.expiresIn = options.expiresIn
  }
  const token = jwt.sign(claims, signOptions)
  if (options.cookie) {
    rest.reply.setCookie(issuer.cookieName, token, {
      httpOnly: true,
      sameSite: 'lax',
      path: '/',
      secure: rest.req.protocol === 'https',
      ...(typeof options.cookie === 'object' ? options.cookie : {}),
    })
  }
  return Ok(token)
}

/** Clears the auth cookie (a logout action); Ok even when there was none. */
export function clearTokenCookie(options: TokenCookieOptions = {}): Result<null, string> {
  const found = currentIssuer()
  if (typeof found === 'string') return Err(found)
  if (found.issuer.method === 'header') return Err(messages.tokenNoCookies)
  found.rest.reply.clearCookie(found.issuer.cookieName, { path: '/', ...options })
  return Ok(null)
}
