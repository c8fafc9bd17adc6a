import fastifyCors, { type FastifyCorsOptions } from '@fastify/cors'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { CORS_DEFAULTS } from './cors-config.js'
import { errorMessage } from '../lib/diagnostics.js'
import { ErrConfig } from '../lib/errors.js'
import { messages } from '../lib/messages.js'
import type { CorsConfig, CorsOptions, CorsOrigin, CorsRouteRule } from './cors-config.js'
import { compilePathMatcher, routedPath, routerPathOptionsOf, type RouterPathOptions } from './paths.js'
import { concern } from './concern.js'

export interface CorsPluginOptions {
  allowedOrigins: readonly string[]
  cors?: CorsConfig
  /** The MCP endpoint is on: its clients send `Mcp-Protocol-Version`, allowed by default too. */
  mcp?: boolean
  /** An action streams: reconnecting SSE clients send `Last-Event-ID`, allowed by default too. */
  streams?: boolean
  /** An action takes idempotency keys: `Idempotency-Key` is allowed and `Idempotent-Replayed` exposed by default too. */
  idempotency?: boolean
  /**
   * Plugin mode: answer preflights for this registration's own routes only, never for the host's
   * (its `OPTIONS *` then matches only paths of routes added in this context).
   */
  ownRoutesOnly?: boolean
  /** The app's router options: a rule's path matches as the router routes (plugins/paths.ts). */
  router?: RouterPathOptions
}

/** Every field filled: the defaults with `cors.defaults` (or a rule's options) merged over them. */
type ResolvedCorsOptions = Required<CorsOptions>

/** The @fastify/cors options for one request. A fixed policy returns one object built at boot. */
type Policy = (origin: string, req: FastifyRequest) => FastifyCorsOptions

interface CompiledRule {
  path: string
  matches: (path: string) => boolean
  decide: Policy
}

const optionKeys = ['origin', 'allowMethods', 'allowHeaders', 'maxAge', 'credentials', 'exposeHeaders'] as const

/** An origin list that matches no request: @fastify/cors then writes no allow-origin header. */
const noOrigin: string[] = Object.freeze([]) as unknown as string[]

/** `over` merged onto `base`; an `undefined` field keeps the base value. */
function mergeOptions(base: ResolvedCorsOptions, over: CorsOptions | undefined): ResolvedCorsOptions {
  if (over === undefined || over === null) return base
  if (typeof over !== 'object') throw new ErrConfig(messages.corsInvalidOptions)
  const merged = { ...base }
  for (const key of optionKeys) {
    if (over[key] !== undefined) (merged as Record<string, unknown>)[key] = over[key]
  }
  return merged
}

function headerList(name: string, value: unknown): string {
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw new ErrConfig(messages.corsInvalidOption(name))
  }
  return value.join(', ')
}

/** A fixed origin for @fastify/cors: `*`, or the list whose members are echoed. */
function fixedOrigin(origin: Exclude<CorsOrigin, Function>): string | string[] {
  if (origin === '*') return '*'
  if (typeof origin === 'string') return [origin]
  if (Array.isArray(origin) && origin.every((item) => typeof item === 'string')) {
    return origin.includes('*') ? '*' : Object.freeze([...origin]) as unknown as string[]
  }
  throw new ErrConfig(messages.corsInvalidOption('origin'))
}

/**
 * Turns resolved options into a policy. Header strings are joined once here; only an `origin` or
 * `allowMethods` function makes the policy build a fresh object per request.
 */
function compilePolicy(options: ResolvedCorsOptions): Policy {
  const base: FastifyCorsOptions = {
    credentials: options.credentials === true,
    // Any OPTIONS request is answered as a preflight (204), never with @fastify/cors' plain-text 400.
    strictPreflight: false,
  }
  // An empty list sends no header (allowHeaders then reflects the request's Access-Control-Request-Headers).
  const allowHeaders = headerList('allowHeaders', options.allowHeaders)
  if (allowHeaders !== '') base.allowedHeaders = allowHeaders
  const exposeHeaders = headerList('exposeHeaders', options.exposeHeaders)
  if (exposeHeaders !== '') base.exposedHeaders = exposeHeaders
  if (typeof options.maxAge !== 'number' || !Number.isFinite(options.maxAge)) throw new ErrConfig(messages.corsInvalidOption('maxAge'))
  base.maxAge = options.maxAge

  const { origin, allowMethods } = options
  if (typeof allowMethods !== 'function') base.methods = headerList('allowMethods', allowMethods)
  if (typeof origin !== 'function') base.origin = fixedOrigin(origin)
  // `*` with credentials is refused by browsers; a reflected origin with credentials would let any
  // site send credentialed requests. So `*` never carries credentials (docs/cors.md).
  if (base.origin === '*') base.credentials = false
  if (typeof origin !== 'function' && typeof allowMethods !== 'function') {
    const fixed = Object.freeze(base)
    return () => fixed
  }
  return (requestOrigin, req) => {
    const answer = { ...base }
    if (typeof origin === 'function') {
      const allowed = origin(requestOrigin, { req })
      answer.origin = typeof allowed === 'string' && allowed !== '' ? allowed : noOrigin
      if (allowed === '*') answer.credentials = false
    }
    if (typeof allowMethods === 'function') answer.methods = headerList('allowMethods', allowMethods(requestOrigin, { req }))
    return answer
  }
}

function compileRule(rule: CorsRouteRule, index: number, defaults: ResolvedCorsOptions, policies: { defaults: Policy; deny: Policy }, router?: RouterPathOptions): CompiledRule {
  if (rule === null || typeof rule !== 'object' || typeof rule.path !== 'string') throw new ErrConfig(messages.corsInvalidRule(index))
  const { path, resolver, options } = rule
  const matches = compilePathMatcher(path, router)
  if (resolver === undefined) {
    return { path, matches, decide: options === undefined ? policies.defaults : compilePolicy(mergeOptions(defaults, options)) }
  }
  if (typeof resolver !== 'function') throw new ErrConfig(messages.corsInvalidRule(index))
  // A resolver that returns the same options object each time compiles it once.
  const compiled = new WeakMap<object, Policy>()
  const decide: Policy = (origin, req) => {
    const result = resolver(origin, { req })
    if (result === true || result === undefined || result === null) return policies.defaults(origin, req)
    if (result === false) return policies.deny(origin, req)
    if (typeof result !== 'object') throw new ErrConfig(messages.corsInvalidResolverResult(typeof result))
    let policy = compiled.get(result)
    if (policy === undefined) {
      policy = compilePolicy(mergeOptions(defaults, result))
      compiled.set(result, policy)
    }
    return policy(origin, req)
  }
  return { path, matches, decide }
}

/**
 * The CORS policy, compiled at boot. The delegator: the first `addCors` rule whose path matches
 * decides (its resolver over its options), otherwise the defaults; a rule that throws is logged and
 * denies. `fixed` is set when one options object answers every request (no route rules, no function
 * options): @fastify/cors then needs no delegator, whose option merging costs a fifth of a request.
 */
export function compileCors({ allowedOrigins, cors = {}, mcp = false, streams = false, idempotency = false, router }: CorsPluginOptions) {
  // The specification's defaults, plus the headers of the features that are on; `origin` comes from
  // `allowedOrigins` (or `*` when it is empty).
  const { allowHeaders, exposeHeaders } = CORS_DEFAULTS
  const builtIn: ResolvedCorsOptions = {
    credentials: CORS_DEFAULTS.credentials,
    maxAge: CORS_DEFAULTS.maxAge,
    allowHeaders: [
      ...allowHeaders,
      ...(mcp ? CORS_DEFAULTS.mcpAllowHeaders : []),
      ...(streams ? CORS_DEFAULTS.streamAllowHeaders : []),
      ...(idempotency ? CORS_DEFAULTS.idempotencyAllowHeaders : []),
    ],
    allowMethods: [...CORS_DEFAULTS.allowMethods],
    exposeHeaders: [...exposeHeaders, ...(idempotency ? CORS_DEFAULTS.idempotencyExposeHeaders : [])],
    origin: allowedOrigins.length === 0 ? '*' : [...allowedOrigins],
  }
  const defaults = mergeOptions(builtIn, cors.defaults)
  const policies = {
    defaults: compilePolicy(defaults),
    // Deny keeps the preflight alive (`origin: false` would switch it off) and never calls user code.
    deny: compilePolicy({
      ...defaults,
      origin: noOrigin,
      allowMethods: typeof defaults.allowMethods === 'function' ? builtIn.allowMethods : defaults.allowMethods,
    }),
  }
  if (cors.addCors !== undefined && !Array.isArray(cors.addCors)) throw new ErrConfig(messages.corsInvalidRule(-1))
  const rules = (cors.addCors ?? []).map((rule, index) => compileRule(rule, index, defaults, policies, router))

  const fixed =
    rules.length === 0 && typeof defaults.origin !== 'function' && typeof defaults.allowMethods !== 'function'
      ? policies.defaults('', undefined as never)
      : undefined

  function corsDelegator(req: FastifyRequest, callback: (error: Error | null, options: FastifyCorsOptions) => void): void {
    const origin = req.headers.origin ?? ''
    let rulePath = '*'
    let options: FastifyCorsOptions
    try {
      let decide = policies.defaults
      if (rules.length > 0) {
        // The path the router routes on, never the raw target (`/%61dmin/users` is `/admin/users`).
        const path = routedPath(req.url, router)
        for (const rule of rules) {
          if (rule.matches(path)) {
            decide = rule.decide
            rulePath = rule.path
            break
          }
        }
      }
      options = decide(origin, req)
    } catch (error) {
      console.error(messages.corsRuleFailed(rulePath, errorMessage(error)))
      options = policies.deny(origin, req)
    }
    callback(null, options)
  }
  return { delegator: corsDelegator, fixed }
}

/**
 * One @fastify/cors registration for `app`'s context (an `onRequest` hook, so custom routes and the
 * 404 answer carry CORS headers too): static options for a fixed policy, else the per-request delegator.
 */
export async function setupCors(app: FastifyInstance, options: CorsPluginOptions): Promise<void> {
  const router = routerPathOptionsOf(app)
  const { delegator, fixed } = compileCors({ router, ...options })
  const register = () => app.register(fastifyCors, fixed ? { hook: 'onRequest', ...fixed } : { hook: 'onRequest', delegator })
  if (options.ownRoutesOnly) await scopePreflights(app, router, register)
  else await register()
}

/** A registration's own routes, for the preflight constraint: the paths of the routes it added. */
interface PreflightOwner {
  id: string
  matches: (path: string) => boolean
}

const PREFLIGHT_CONSTRAINT = 'fastifyActionsPreflight'
// The owners by Fastify server: the constraint strategy is router-wide, one per server.
const preflightOwners = new WeakMap<object, PreflightOwner[]>()
let preflightIds = 0

/**
 * @fastify/cors answers preflights in its hook for whatever reaches its `OPTIONS *` route, and a
 * registration without a prefix would own `OPTIONS *` for the whole app (the host's routes too, and
 * a second registration's would collide). So the route gets a constraint: it matches only an OPTIONS
 * request whose routed path is a route this registration added; any other falls to the host's routes.
 */
async function scopePreflights(app: FastifyInstance, router: RouterPathOptions, register: () => PromiseLike<unknown>): Promise<void> {
  let owners = preflightOwners.get(app.server)
  if (!owners) {
    const list: PreflightOwner[] = (owners = [])
    preflightOwners.set(app.server, list)
    app.addConstraintStrategy({
      name: PREFLIGHT_CONSTRAINT,
      storage() {
        const handlers = new Map<unknown, unknown>()
        return { get: (value) => (handlers.get(value) ?? null) as never, set: (value, store) => void handlers.set(value, store) }
      },
      deriveConstraint(req: { method?: string; url?: string }) {
        if (req.method !== 'OPTIONS' || req.url === undefined) return undefined
        const path = routedPath(req.url, router)
        return list.find((owner) => owner.matches(path))?.id
      },
      mustMatchWhenDerived: false,
    })
  }
  const id = `fa${++preflightIds}`
  const exact = new Set<string>()
  const prefixes: string[] = []
  const fold = (path: string) => {
    const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path
    return router.caseSensitive ? trimmed : trimmed.toLowerCase()
  }
  owners.push({ id, matches: (path) => exact.has(fold(path)) || prefixes.some((prefix) => fold(path).startsWith(prefix)) })
  let corsRoute = true
  app.addHook('onRoute', (route) => {
    const url = route.url ?? route.path
    if (typeof url !== 'string') return
    if (route.method === 'OPTIONS' && url.endsWith('*') && corsRoute) {
      route.constraints = { ...route.constraints, [PREFLIGHT_CONSTRAINT]: id }
      return
    }
    if (url.endsWith('*')) prefixes.push(fold(url.slice(0, -1)))
    else exact.add(fold(url))
  })
  await register()
  corsRoute = false
}

/** Cross-origin rules as the plugin `fastify-actions-cors`. */
export const corsPlugin = concern('cors', setupCors)
