/** `auth`, the auth plugin's options (plugins/auth.ts, plugins/token.ts): their types, defaults, keys and resolver. */
import { CORE_DEFAULTS, configError, optionalBoolean } from '../lib/config.js'
import type { KeyTable } from '../lib/config-keys.js'
import { ErrConfig } from '../lib/errors.js'
import { messages } from '../lib/messages.js'
import { expiresInProblem } from '../lib/token-lifetime.js'

/** JWT authentication for protected actions. */
export interface AuthConfig {
  /** The JWT verification secret (or public key for RS/ES/PS/EdDSA algorithms). */
  secret: string
  method?: 'header' | 'cookie' | 'both'
  headerName?: string
  cookieName?: string
  /** Accepted signing algorithms; HS256 by default. */
  algorithms?: string[]
  /**
   * Claims every token must carry, checked by @fastify/jwt's verifier (fast-jwt): `allowedAud`,
   * `allowedIss`, `allowedSub` (a string, a RegExp or a list of them), `requiredClaims`, `maxAge`
   * (seconds or a duration text). A single `allowedAud` / `allowedIss` string is also what tokens are signed with.
   */
  verify?: AuthVerifyConfig
  /** Lifetime of tokens the server signs when the call names none (default '1h'): seconds or a duration text. */
  expiresIn?: number | string
  /** The auth cookie `signToken({ cookie: true })` sets. */
  cookie?: AuthCookieConfig
}

/** A claim value a token must match: a string (exact), a RegExp, or a list of them (any matches). */
export type AllowedClaim = string | RegExp | Array<string | RegExp>

/** `auth.verify`: what @fastify/jwt's verifier requires of every token (fast-jwt's options of the same names). */
export interface AuthVerifyConfig {
  allowedAud?: AllowedClaim
  allowedIss?: AllowedClaim
  allowedSub?: AllowedClaim
  /** Claims that must be present (`['exp']` refuses tokens that never expire). */
  requiredClaims?: string[]
  /** Oldest accepted token, counted from `iat`: seconds or a duration text ('8h'). */
  maxAge?: number | string
}

/** `auth.cookie`. */
export interface AuthCookieConfig {
  /**
   * `Secure` on the cookie (default: set unless the request is plain HTTP to a loopback host, so a
   * server behind a TLS proxy sets it even without `trustProxy`). `false` never sets it.
   */
  secure?: boolean
}

/** AuthConfig with its defaults applied, checked once at boot. */
export interface ResolvedAuth {
  readonly secret: string
  readonly method: 'header' | 'cookie' | 'both'
  /** Lower-cased, as Node stores request headers. */
  readonly headerName: string
  readonly cookieName: string
  readonly algorithms: readonly string[]
  /** Undefined when not configured. */
  readonly verify?: Readonly<AuthVerifyConfig>
  readonly expiresIn: number | string
  /** Undefined: the default rule (Secure unless plain HTTP to loopback). */
  readonly cookieSecure?: boolean
}

/** The keys `auth.verify` accepts. */
const AUTH_VERIFY_KEYS = Object.freeze({ allowedAud: true, allowedIss: true, allowedSub: true, requiredClaims: true, maxAge: true } satisfies KeyTable<AuthVerifyConfig>)

/** Every key of `AuthConfig`, for the unknown-key check (lib/config-keys.ts). */
export const AUTH_KEYS: KeyTable<AuthConfig> = Object.freeze({
  secret: true,
  method: true,
  headerName: true,
  cookieName: true,
  algorithms: true,
  verify: AUTH_VERIFY_KEYS,
  expiresIn: true,
  cookie: Object.freeze({ secure: true } satisfies KeyTable<AuthCookieConfig>),
})

/** The auth plugin's defaults (`auth`: where the token is read, how it is signed). */
export const AUTH_DEFAULTS = Object.freeze({
  method: 'header',
  headerName: 'authorization',
  cookieName: 'auth_token',
  algorithms: Object.freeze(['HS256']),
  /** Lifetime of the tokens the server signs when the call names none. */
  expiresIn: '1h',
} as const)

/** The shortest HMAC secret accepted in production: 256 bits, the size of an HS256 key. */
const MIN_SECRET_BYTES = 32

/** Secrets that sample files, compose files and tutorials print: anyone can sign tokens with them. */
const PLACEHOLDER_SECRET = /change-?me|replace-?me|your-?(jwt-?)?secret|^(secret|jwt-?secret|my-?secret|super-?secret|password|test|example)$/

/**
 * In production (`NODE_ENV=production`) an HMAC secret (HS256/384/512) must be at least 32 bytes and
 * not a known placeholder: a token forged with a public default would be accepted as any user.
 */
function checkProductionSecret(secret: string, algorithms: readonly string[]): void {
  if (process.env.NODE_ENV !== CORE_DEFAULTS.hideErrorsIn || !algorithms.some((name) => name.startsWith('HS'))) return
  const normalized = secret.trim().toLowerCase().replace(/[\s_]+/g, '-')
  if (PLACEHOLDER_SECRET.test(normalized)) throw new ErrConfig(messages.authPlaceholderSecret)
  const bytes = Buffer.byteLength(secret)
  if (bytes < MIN_SECRET_BYTES) throw new ErrConfig(messages.authShortSecret(bytes, MIN_SECRET_BYTES))
}

/** Checks and completes `auth` once, at boot: a missing or weak secret, an unknown method or algorithm is an `FA_ERR_CONFIG`. */
export function resolveAuth(config: AuthConfig): ResolvedAuth {
  if (typeof config?.secret !== 'string' || config.secret === '') throw new ErrConfig(messages.authNoSecret)
  const method = config.method ?? AUTH_DEFAULTS.method
  if (method !== 'header' && method !== 'cookie' && method !== 'both') throw new ErrConfig(messages.authBadMethod(String(method)))
  const algorithms = config.algorithms ?? AUTH_DEFAULTS.algorithms
  if (!Array.isArray(algorithms) || algorithms.length === 0 || algorithms.includes('none')) {
    throw new ErrConfig(messages.authBadAlgorithms)
  }
  checkProductionSecret(config.secret, algorithms)
  const expiresIn = config.expiresIn ?? AUTH_DEFAULTS.expiresIn
  const expiresProblem = expiresInProblem(expiresIn)
  if (expiresProblem) throw configError('auth.expiresIn', expiresProblem.replace(/^expiresIn /, ''))
  if (config.cookie !== undefined && (typeof config.cookie !== 'object' || config.cookie === null)) throw configError('auth.cookie', 'must be an object', config.cookie)
  return Object.freeze({
    secret: config.secret,
    method,
    headerName: (config.headerName ?? AUTH_DEFAULTS.headerName).toLowerCase(),
    cookieName: config.cookieName ?? AUTH_DEFAULTS.cookieName,
    algorithms: Object.freeze([...algorithms]),
    verify: resolveAuthVerify(config.verify),
    expiresIn,
    cookieSecure: config.cookie?.secure === undefined ? undefined : optionalBoolean('auth.cookie.secure', config.cookie.secure, true),
  })
}

function isAllowedClaim(value: unknown): boolean {
  const one = (item: unknown) => (typeof item === 'string' && item !== '') || item instanceof RegExp
  return one(value) || (Array.isArray(value) && value.length > 0 && value.every(one))
}

const verifyKeys = new Set(Object.keys(AUTH_VERIFY_KEYS))

function resolveAuthVerify(verify: AuthVerifyConfig | undefined): Readonly<AuthVerifyConfig> | undefined {
  if (verify === undefined) return undefined
  if (typeof verify !== 'object' || verify === null) throw configError('auth.verify', 'must be an object', verify)
  for (const key of Object.keys(verify)) {
    if (!verifyKeys.has(key)) throw configError(`auth.verify.${key}`, 'is not an option (allowedAud, allowedIss, allowedSub, requiredClaims, maxAge)')
  }
  for (const key of ['allowedAud', 'allowedIss', 'allowedSub'] as const) {
    if (verify[key] !== undefined && !isAllowedClaim(verify[key])) throw configError(`auth.verify.${key}`, 'must be a string, a RegExp or a list of them', verify[key])
  }
  const { requiredClaims, maxAge } = verify
  if (requiredClaims !== undefined && (!Array.isArray(requiredClaims) || !requiredClaims.every((claim) => typeof claim === 'string' && claim !== ''))) {
    throw configError('auth.verify.requiredClaims', 'must be a list of claim names', requiredClaims)
  }
  if (maxAge !== undefined) {
    const problem = expiresInProblem(maxAge)
    if (problem) throw configError('auth.verify.maxAge', problem.replace(/^expiresIn /, ''))
  }
  return Object.freeze({ ...verify })
}
