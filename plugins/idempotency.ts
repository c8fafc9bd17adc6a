import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Action } from '../lib/action.js'
import { runInRequestScope, type ServerContext } from '../lib/context.js'
import { errorMessage } from '../lib/diagnostics.js'
import type { Authenticator } from '../lib/engine.js'
import { fail, isFailure, type Failure } from '../lib/errors.js'
import {
  createMemoryIdempotencyStore,
  createRedisIdempotencyStore,
  fingerprintOf,
  isIdempotencyKey,
  storeKeyOf,
  withStoreTimeout,
  type IdempotencyStore,
  type StoredAnswer,
} from '../lib/idempotency.js'
import type { ResolvedIdempotency } from './idempotency-config.js'
import { requestStoreOf } from './request-scope.js'

/** The response header of a replayed answer (Stripe's name, the IETF draft's example). */
export const REPLAYED_HEADER = 'idempotent-replayed'
export const KEY_HEADER = 'idempotency-key'

/** One idempotent call as an adapter sees it: how to run it, answer a refusal, and replay a stored answer. */
export interface GuardedCall<T> {
  action: Action
  /** `service.action` */
  name: string
  payload: unknown
  /** The key as received (undefined: none sent). */
  key: unknown
  /** The caller: `user:<id>` when authenticated, else `client:<key>`; or the auth failure of a protected action. */
  principal: () => Promise<string | Failure> | string | Failure
  /** Runs the action; `stored` is the answer to keep, or undefined when nothing may be kept (5xx, client gone). */
  run: () => Promise<{ value: T; stored?: StoredAnswer }>
  refuse: (failure: Failure) => T
  replay: (answer: StoredAnswer) => T
  /** Logs a store problem (the request's logger, or diagnostics). */
  log: (message: string) => void
}

export type IdempotencyGuard = <T>(call: GuardedCall<T>) => Promise<T>

/** The store `rest.idempotency` names: yours, else Redis, else one in this process's memory. */
export function storeOf(config: ResolvedIdempotency): IdempotencyStore {
  if (config.store) return config.store
  if (config.redis) return createRedisIdempotencyStore(config.redis)
  return createMemoryIdempotencyStore({ maxKeys: config.maxKeys })
}

/**
 * The rules of docs/idempotency.md, for every way in: no key on a required action is a 400; the first
 * request with a key runs and its final answer is kept (never a 5xx, never one the client did not
 * get); a repeat replays it; the same key while running is a 409, with another input a 422; a store
 * that does not answer is a 503 and the action does not run.
 */
export function createIdempotencyGuard(config: ResolvedIdempotency, store: IdempotencyStore = storeOf(config)): IdempotencyGuard {
  const call = <T>(method: () => Promise<T> | T) => withStoreTimeout(method, config.timeout)
  return async function guard<T>(request: GuardedCall<T>): Promise<T> {
    const { action, key } = request
    if (key === undefined) return request.action.idempotency === 'required' ? request.refuse(fail.idempotencyKeyRequired(request.name)) : (await request.run()).value
    if (!isIdempotencyKey(key)) return request.refuse(fail.idempotencyKeyInvalid())
    const principal = await request.principal()
    if (isFailure(principal)) return request.refuse(principal)
    const storeKey = storeKeyOf(principal, key)
    const fingerprint = fingerprintOf(request.name, request.payload)
    const lease = Math.max(config.lease, (action.timeout ?? 0) + 1000)
    let claim
    try {
      claim = await call(() => store.acquire(storeKey, fingerprint, lease))
    } catch (error) {
      request.log(`idempotency store: ${errorMessage(error)}`)
      return request.refuse(fail.idempotencyUnavailable(errorMessage(error)))
    }
    if (claim.state !== 'acquired') {
      if (claim.fingerprint !== fingerprint) return request.refuse(fail.idempotencyKeyReused())
      return claim.state === 'running' ? request.refuse(fail.idempotencyInFlight()) : request.replay(claim.answer)
    }
    const token = claim.token
    let outcome: Awaited<ReturnType<GuardedCall<T>['run']>>
    try {
      outcome = await request.run()
    } catch (error) {
      await call(() => store.release(storeKey, token)).catch((problem: unknown) => request.log(`idempotency store: ${errorMessage(problem)}`))
      throw error
    }
    const stored = outcome.stored
    const settle = stored ? () => store.complete(storeKey, token, fingerprint, stored, config.ttl) : () => store.release(storeKey, token)
    // The answer goes out either way; a store that fails here leaves the key held until its lease ends.
    await call(settle).catch((problem: unknown) => request.log(`idempotency store: ${errorMessage(problem)}`))
    return outcome.value
  }
}

/** The header's value as sent (undefined when absent). */
export function keyFromHeaders(request: FastifyRequest): string | undefined {
  const value = request.headers[KEY_HEADER]
  return Array.isArray(value) ? value.join(', ') : value
}

/** The principal of an HTTP request: its verified user, else its client key; a protected action's auth failure as is. */
export function httpPrincipal(request: FastifyRequest, reply: FastifyReply, context: ServerContext<any>, action: Action, authenticate?: Authenticator, clientKey?: (request: FastifyRequest) => string) {
  return async (): Promise<string | Failure> => {
    if (authenticate) {
      const auth = await runInRequestScope(requestStoreOf(request, reply, context), () => authenticate(context))
      if (auth.ok) return `user:${auth.value.userId}`
      if (action.isProtected) return auth as Failure
    }
    return `client:${clientKey?.(request) ?? request.ip}`
  }
}

/** A client that left before its answer: the answer never reached it, so it is not kept. */
export function clientGone(request: FastifyRequest, reply: FastifyReply): boolean {
  // Not `request.raw.destroyed`: a request read to its end is destroyed (autoDestroy) while its socket lives on.
  return reply.raw.destroyed || request.raw.socket?.destroyed === true
}
