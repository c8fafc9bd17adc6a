import fp from 'fastify-plugin'
import fastifyCookie from '@fastify/cookie'
import fastifyJwt, { type FastifyJWTOptions } from '@fastify/jwt'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { identityOf, resolveAuthOptions, verificationFailureReason, type AuthOptions } from '../lib/auth.js'
import { getRequestStore } from '../lib/context.js'
import { fail, type Authenticator, type Engine } from '../lib/engine.js'
import { messages } from '../lib/messages.js'
import { Ok } from '../lib/result.js'
import type { AuthConfig, RestRequestContext } from '../lib/types.js'
import { registerTokenIssuer } from './token.js'

export interface AuthPluginOptions {
  auth: AuthConfig
  engine: Engine
  /** `rest.allowedOrigins`: the other sites cookie-authenticated requests may come from. */
  allowedOrigins?: string[]
}

// Reading headers is HTTP's business: it lives here, the claims logic in lib/auth.ts.
const bearer = /^Bearer[ \t]+(\S+)$/i

/** The token of a `Bearer <token>` header value, or why there is none. */
function bearerToken(value: string | undefined): { token: string } | { reason: string } {
  if (value === undefined || value.trim() === '') return { reason: messages.authReasons.missingToken }
  const match = bearer.exec(value.trim())
  return match ? { token: match[1] } : { reason: messages.authReasons.badScheme }
}

/**
 * Cookie auth rides along on any request a browser sends, including a form posted from another
 * site (multipart or url-encoded, no preflight). Such a request is refused unless its `Origin` is
 * this server's own or listed in `allowedOrigins`; without an `Origin`, `Sec-Fetch-Site` decides.
 */
function isCrossSiteRefused(
  headers: { origin?: string; host?: string; 'sec-fetch-site'?: string | string[] },
  allowedOrigins: ReadonlySet<string>,
): boolean {
  const origin = headers.origin
  if (origin === undefined) return headers['sec-fetch-site'] === 'cross-site'
  if (allowedOrigins.has(origin)) return false
  try {
    return new URL(origin).host !== headers.host
  } catch {
    return true // `null` (a sandboxed or opaque origin) and anything unparsable
  }
}

type TokenLookup = (request: FastifyRequest) => { token: string } | { reason: string }

function tokenLookup(options: AuthOptions): TokenLookup {
  if (options.method === 'cookie') {
    return (request) => {
      const token = request.cookies[options.cookieName]
      return token ? { token } : { reason: messages.authReasons.missingToken }
    }
  }
  return (request) => {
    const value = request.headers[options.headerName]
    return bearerToken(Array.isArray(value) ? value[0] : value)
  }
}

const denied = (reason: string) => fail(401, messages.authFailed(reason))

/** Verifies the token of the current request and stores its identity in the request store. */
function createAuthenticator(app: FastifyInstance, lookup: TokenLookup, crossSiteGuard: ((request: FastifyRequest) => boolean) | undefined): Authenticator {
  return (context) => {
    const store = getRequestStore()
    const rest = context.get<RestRequestContext>('rest')
    if (!store || !rest) return denied(messages.authReasons.noRequest)
    if (crossSiteGuard?.(rest.req)) return denied(messages.authReasons.crossSite)
    const found = lookup(rest.req)
    if ('reason' in found) return denied(found.reason)
    let claims: Record<string, unknown>
    try {
      claims = app.jwt.verify<Record<string, unknown>>(found.token)
    } catch (error) {
      return denied(verificationFailureReason(error))
    }
    const identity = identityOf(claims)
    if (!identity) return denied(messages.authReasons.noUserId)
    store.auth = identity
    return Ok(identity)
  }
}

/**
 * JWT authentication for protected actions: @fastify/jwt verifies (signature, algorithm, `exp`, `nbf`),
 * the engine calls the authenticator before the global before handler. `app.jwt.sign` and
 * `request.jwtVerify()` are available to custom routes, reading the token from the same place.
 */
export const authPlugin = fp<AuthPluginOptions>(
  async function auth(app, { auth, engine, allowedOrigins = [] }) {
    const options = resolveAuthOptions(auth)
    const lookup = tokenLookup(options)
    if (options.method === 'cookie') await app.register(fastifyCookie)
    const hmacOnly = options.algorithms.every((algorithm) => algorithm.startsWith('HS'))
    const jwtOptions: FastifyJWTOptions = {
      // A public key (RS/ES/PS/EdDSA) can only verify: @fastify/jwt then runs in verify-only mode, without `sign`.
      secret: hmacOnly ? options.secret : { public: options.secret },
      verify: {
        // fast-jwt rejects an unknown algorithm name at registration, so the string list needs no narrowing here.
        algorithms: options.algorithms as NonNullable<NonNullable<FastifyJWTOptions['verify']>['algorithms']>,
        extractToken: (request) => {
          const found = lookup(request)
          return 'token' in found ? found.token : undefined
        },
      },
    }
    await app.register(fastifyJwt, jwtOptions)
    registerTokenIssuer(app, options) // signToken (plugins/token.ts): actions issue tokens with this jwt
    const allowed = new Set(allowedOrigins)
    const crossSiteGuard = options.method === 'cookie' ? (request: FastifyRequest) => isCrossSiteRefused(request.headers, allowed) : undefined
    engine.setAuthenticator(createAuthenticator(app, lookup, crossSiteGuard))
  },
  { name: 'fastify-actions-auth', fastify: '5.x' },
)
