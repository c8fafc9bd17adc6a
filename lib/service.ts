import type { Static, TSchema } from 'typebox'
import type { StandardSchemaV1 } from './standard-schema.js'
import type { Action, Service } from './action.js'
import type { DeclaredDataOf } from './declared-errors.js'

/** A service that keeps its literal `name` and its actions' types (see `createService`). */
export type TypedService<N extends string = string, A extends Action[] = Action[]> = Omit<Service, 'name' | 'actions'> & {
  name: N
  actions: A
}

/**
 * Defines a service. Same object at run time; its type keeps the literal name and each action's
 * name, input and output, so `createClient<typeof services>` types every call. A service written
 * as a plain object annotated `Service` works the same on the server, untyped on the client.
 */
export function createService<const N extends string, const A extends Action[]>(service: {
  name: N
  description: string
  actions: A
  meta?: Record<string, unknown>
}): TypedService<N, A> {
  return service
}

/**
 * What a caller sends to an action: the schema's *input* type (for a Standard Schema with defaults
 * or transforms it differs from the handler's `data`); a record of unknowns without a schema.
 */
export type PayloadOf<A> = A extends { validation?: infer S }
  ? [NonNullable<S>] extends [never]
    ? Record<string, unknown>
    : NonNullable<S> extends StandardSchemaV1
      ? StandardSchemaV1.InferInput<NonNullable<S>>
      : NonNullable<S> extends TSchema
        ? Static<NonNullable<S>>
        : Record<string, unknown>
  : Record<string, unknown>

/** The handler's `Ok` value type. */
export type OutputOf<A> = A extends { handler: (...args: any[]) => infer R } ? Extract<Awaited<R>, { ok: true }> extends { value: infer V } ? V : unknown : unknown

/** True when the action sets `visibility: { rest: false }` (literally, through `createAction`). */
/** True for an action made with `createAction({ deprecated: {...} })`. */
export type IsDeprecated<A> = A extends { deprecated: { since: string } } ? true : false

export type IsHiddenFromRest<A> = A extends { visibility?: infer V }
  ? [NonNullable<V>] extends [never]
    ? false
    : NonNullable<V> extends { rest: false }
      ? true
      : false
  : false

/** True when the action takes multipart uploads (`isSpecial` set through `createAction`). */
export type IsUploadAction<A> = A extends { isSpecial?: infer X } ? ([NonNullable<X>] extends [never] ? false : true) : false

/** True for a streaming action (its handler returns an `AsyncIterable`: an async generator function). */
export type IsStreamingAction<A> = A extends { handler: (...args: any[]) => infer R }
  ? [Awaited<R>] extends [never]
    ? false
    : Awaited<R> extends AsyncIterable<any>
      ? true
      : false
  : false

/** The type of each event a streaming action yields (`never` for other actions). */
export type EventOf<A> = A extends { handler: (...args: any[]) => infer R } ? (Awaited<R> extends AsyncIterable<infer E> ? E : never) : never

type UnwrapFinal<F> = F extends { ok: true; value: infer V } ? V : F extends { ok: false } ? never : F
type FinalsOf<R> = R extends AsyncGenerator<any, infer F, any> ? UnwrapFinal<F> : never

/** A streaming action's final value (what its generator returns, `Ok` unwrapped); `void` when it returns nothing. */
export type FinalOf<A> = A extends { handler: (...args: any[]) => infer R } ? ([FinalsOf<Awaited<R>>] extends [never] ? void : FinalsOf<Awaited<R>>) : never
/** The declared errors of an action (its `errors`, kept by `createAction`): code → the data type; `{}` without any. */
export type ErrorsOf<A> = A extends { errors?: infer E }
  ? [NonNullable<E>] extends [never]
    ? {}
    : string extends keyof NonNullable<E>
      ? {}
      : { [C in keyof NonNullable<E> & string]: DeclaredDataOf<NonNullable<E>[C]> }
  : {}
