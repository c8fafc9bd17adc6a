import fastifyCookie from '@fastify/cookie'
import fastifyJwt, { type FastifyJWTOptions } from '@fastify/jwt'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { identityOf } from '../lib/auth.js'
import { getRequestStore, type ServerContext } from '../lib/context.js'
import type { Authenticator, Engine } from '../lib/engine.js'
import { fail } from '../lib/errors.js'
import { messages } from '../lib/messages.js'
import { Ok } from '../lib/result.js'
import { verificationFailureReason } from './auth-errors.js'
import { isSameOrigin } from './hosts.js'
import type { ResolvedAuth } from './auth-config.js'
import type { RestRequestContext } from './request-scope.js'
import { expiresInProblem } from '../lib/token-lifetime.js'
import { registerTokenIssuer, withSignDefaults } from './token.js'
import { concern } from './concern.js'

/** Signing and verifying with the server's own JWT settings (@fastify/jwt underneath). */
export interface TokenSigner {
  /**
   * Signs claims with `auth.secret` (HMAC algorithms only). `expiresIn`: seconds, or a duration such
   * as '15m'; over a year throws (a number of milliseconds, by mistake).
   */
  sign(payload: Record<string, unknown>, options?: { expiresIn?: number | string; notBefore?: number | string }): string
  /** Verifies a token as a protected action would (signature, algorithm, `exp`, `nbf`); throws when it is not valid. */
  verify<T extends Record<string, unknown> = Record<string, unknown>>(token: string): T
}

export interface AuthPluginOptions {
  auth: ResolvedAuth
  engine: Engine
  /** `rest.allowedOrigins`: the other sites cookie-authenticated requests may come from. */
  allowedOrigins: readonly string[]
  /** The registration's context: `signToken` finds this registration's signer by it. */
  context?: ServerContext<any>
}

// Namespaces given to @fastify/jwt inside apps that already have a `jwt` decorator, one per registration.
let jwtNamespaces = 0

// Reading headers is HTTP's business: it lives here, the claims logic in lib/auth.ts.
const bearer = /^Bearer[ \t]+(\S+)$/i

/** The token and where it came from (`cookie`: the cross-site rules apply), or why there is none. */
type TokenLookup = (request: FastifyRequest) => { token: string; fromCookie: boolean } | { reason: string }

/** The token of a `Bearer <token>` header value, or why there is none. */
function bearerToken(value: string | undefined): { token: string; fromCookie: false } | { reason: string } {
  if (value === undefined || value.trim() === '') return { reason: messages.authReasons.missingToken }
  const match = bearer.exec(value.trim())
  return match ? { token: match[1], fromCookie: false } : { reason: messages.authReasons.badScheme }
}

/**
 * Where the token is, by `auth.method`: the header, the cookie, or (`'both'`) the header when the
 * request carries one, else the cookie. Used for protected actions and, through `extractToken`, by
 * `request.jwtVerify()`.
 */
function tokenLookup(options: ResolvedAuth): TokenLookup {
  const fromCookie: TokenLookup = (request) => {
    const token = request.cookies[options.cookieName]
    return token ? { token, fromCookie: true } : { reason: messages.authReasons.missingToken }
  }
  const fromHeader: TokenLookup = (request) => {
    const value = request.headers[options.headerName]
    return bearerToken(Array.isArray(value) ? value[0] : value)
  }
  if (options.method === 'cookie') return fromCookie
  if (options.method === 'header') return fromHeader
  return (request) => {
    const value = request.headers[options.headerName]
    return value === undefined || (typeof value === 'string' && value.trim() === '') ? fromCookie(request) : fromHeader(request)
  }
}

/**
 * Cookie auth rides along on any request a browser sends, including a form posted from another
 * site (multipart or url-encoded, no preflight). Such a request is refused unless its `Origin` is
 * this server's own (scheme, host and port) or listed in `allowedOrigins`; without an `Origin`,
 * `Sec-Fetch-Site` decides: `cross-site` and `same-site` (a sibling subdomain, possibly someone
 * else's) are refused, `same-origin`, `none` (typed in the address bar) and its absence pass.
 */
function isCrossSiteRefused(request: FastifyRequest, allowedOrigins: ReadonlySet<string>): boolean {
  const { origin } = request.headers
  if (origin === undefined) {
    const site = request.headers['sec-fetch-site']
    return site === 'cross-site' || site === 'same-site'
  }
  return !allowedOrigins.has(origin) && !isSameOrigin(origin, request)
}

/**
 * Verifies the token of the current request and stores its identity in the request store.
 * It calls `app.jwt.verify` (@fastify/jwt's own verification: signature, algorithm, `exp`, `nbf`)
 * rather than `request.jwtVerify()`: that one folds a bad signature and a bad claim into one error
 * code, so the 401 could no longer say why (test/auth.test.ts asserts each reason), and it always
 * costs a promise where `verify` is synchronous.
 */
function createAuthenticator(
  jwt: FastifyInstance['jwt'],
  lookup: TokenLookup,
  crossSiteGuard: ((request: FastifyRequest) => boolean) | undefined,
  cookieGuard: ((request: FastifyRequest) => boolean) | undefined,
): Authenticator {
  return (context) => {
    const store = getRequestStore()
    const rest = context.get<RestRequestContext>('rest')
    if (!store || !rest) return fail.auth(messages.authReasons.noRequest)
    // With the cookie alone the guard comes first, as it always has; with 'both' it applies only to a token from the cookie.
    if (crossSiteGuard?.(rest.req)) return fail.auth(messages.authReasons.crossSite)
    const found = lookup(rest.req)
    if ('reason' in found) return fail.auth(found.reason)
    if (found.fromCookie && cookieGuard?.(rest.req)) return fail.auth(messages.authReasons.crossSite)
    let claims: Record<string, unknown>
    try {
      claims = jwt.verify<Record<string, unknown>>(found.token)
    } catch (error) {
      return fail.auth(verificationFailureReason(error))
    }
    const identity = identityOf(claims)
    if (!identity) return fail.auth(messages.authReasons.noUserId)
    store.auth = identity
    return Ok(identity)
  }
}

// fast-jwt checks a claim's value only when the claim is present: each check also requires its claim.
const claimOf = { allowedAud: 'aud', allowedIss: 'iss', allowedSub: 'sub', maxAge: 'iat' } as const

/**
 * `auth.verify` as @fastify/jwt's (fast-jwt's) verifier options. A token without the claim an
 * option checks (no `aud` when `allowedAud` is set) is refused too: fast-jwt alone would let it through.
 */
function claimChecks(auth: ResolvedAuth): Record<string, unknown> {
  const verify = auth.verify
  if (!verify) return {}
  const checks: Record<string, unknown> = {}
  const required = new Set(verify.requiredClaims ?? [])
  for (const key of ['allowedAud', 'allowedIss', 'allowedSub', 'maxAge'] as const) {
    if (verify[key] === undefined) continue
    checks[key] = verify[key]
    required.add(claimOf[key])
  }
  if (required.size > 0) checks.requiredClaims = [...required]
  return checks
}

/**
 * JWT authentication for protected actions: the engine calls the authenticator before the global
 * before handler. `app.jwt.sign` and `request.jwtVerify()` are available to custom routes, reading
 * the token from the same place (one lookup for both).
 */
export async function setupAuth(app: FastifyInstance, { auth, engine, allowedOrigins, context }: AuthPluginOptions): Promise<{ jwt: TokenSigner; authenticate: Authenticator }> {
  const lookup = tokenLookup(auth)
  // The user's app may already have @fastify/cookie: registering it twice would fail.
  if (auth.method !== 'header' && !app.hasRequestDecorator('cookies')) await app.register(fastifyCookie)
  const hmacOnly = auth.algorithms.every((algorithm) => algorithm.startsWith('HS'))
  const jwtOptions: FastifyJWTOptions = {
    // A public key (RS/ES/PS/EdDSA) can only verify: @fastify/jwt then runs in verify-only mode, without `sign`.
    secret: hmacOnly ? auth.secret : { public: auth.secret },
    verify: {
      // fast-jwt rejects an unknown algorithm name at registration, so the string list needs no narrowing here.
      algorithms: [...auth.algorithms] as NonNullable<NonNullable<FastifyJWTOptions['verify']>['algorithms']>,
      extractToken: (request) => {
        const found = lookup(request)
        return 'token' in found ? found.token : undefined
      },
      ...claimChecks(auth),
    },
  }
  // Inside an app that already has @fastify/jwt (its own secret, its `request.user`), a second
  // registration would fail on the decorators: this one takes a namespace (`app.jwt.<namespace>`,
  // `request.<namespace>JwtVerify()`) and leaves the app's own untouched.
  const namespace = app.hasDecorator('jwt') ? `fastifyActions${++jwtNamespaces}` : undefined
  await app.register(fastifyJwt, namespace ? { ...jwtOptions, namespace } : jwtOptions)
  const jwt = namespace ? (app.jwt as unknown as Record<string, FastifyInstance['jwt']>)[namespace] : app.jwt
  registerTokenIssuer(app, auth, jwt, context) // signToken (plugins/token.ts): actions issue tokens with this jwt
  const allowed = new Set(allowedOrigins)
  const guard = (request: FastifyRequest) => isCrossSiteRefused(request, allowed)
  const authenticate = createAuthenticator(jwt, lookup, auth.method === 'cookie' ? guard : undefined, auth.method === 'both' ? guard : undefined)
  engine.setAuthenticator(authenticate)
  const signer: TokenSigner = {
    sign: (payload, options) => {
      const problem = options?.expiresIn === undefined ? undefined : expiresInProblem(options.expiresIn)
      if (problem) throw new TypeError(`jwt.sign: ${problem}`)
      return jwt.sign(payload, withSignDefaults(auth, payload, options ?? {}) as Parameters<typeof jwt.sign>[1])
    },
    verify: <T extends Record<string, unknown>>(token: string) => jwt.verify<T>(token),
  }
  // The authenticator also serves whole routes (the MCP endpoint's `requireAuth`).
  return { jwt: signer, authenticate }
}

/** JWT auth as the plugin `fastify-actions-auth`; `expose` receives the signer and the authenticator. */
export const authPlugin = concern(
  'auth',
  async (app, { expose, ...options }: AuthPluginOptions & { expose: (auth: { jwt: TokenSigner; authenticate: Authenticator }) => void }) =>
    expose(await setupAuth(app, options)),
  { dependencies: ['request-scope'] },
)
