import type { DeclaredFailureOf, ErrorDeclarations, PlainErr } from './declared-errors.js'
import type { ErrResult, OkResult, Result } from './result.js'
import type { InferInput, InferOutputSchema, ValidationSchema } from './validation.js'
import type { ServerContext } from './context.js'
import type { Deprecation } from './deprecation.js'

/** Names another action to run as a hook. */
export interface HookRef {
  service: string
  action: string
  isCritical: boolean
}

export interface ActionHooks {
  before?: HookRef[]
  after?: HookRef[]
}

export type UploadMode = 'flat' | 'structured'

export interface ActionSpecial {
  contentType: string
  uploadMode?: UploadMode
}

/** A handler; `TFailure` is the `Err` it may return (`createAction` narrows it to a plain `Err` or a declared `Fail`). */
export type ActionHandler<TInput = unknown, TOutput = unknown, TFailure extends ErrResult<string> = ErrResult<string>> = (
  data: TInput,
  context: ServerContext,
) => OkResult<TOutput> | TFailure | Promise<OkResult<TOutput> | TFailure>

/**
 * What a streaming handler's generator may return: its final value (sent in the `done` event), or a
 * Result (`Ok(final)`, or `Err(text)` to end the stream with an error event).
 */
export type StreamFinal<TFinal = unknown> = TFinal | Result<TFinal, string>

/**
 * A streaming action's handler: an async generator function (each `yield` is one event, the `return`
 * value the final value), or a function that returns an `AsyncIterable` (then set `stream: true`).
 */
export type StreamHandler<TInput = unknown, TEvent = unknown, TFinal = unknown> = (
  data: TInput,
  context: ServerContext,
) => AsyncGenerator<TEvent, StreamFinal<TFinal>, undefined> | AsyncIterable<TEvent> | Promise<AsyncIterable<TEvent>>

/** A named operation. Create it with `createAction` so `data` is typed from `validation`. */
export interface Action<TInput = any, TOutput = unknown> {
  name: string
  description: string
  validation?: ValidationSchema | null
  /**
   * The schema of the handler's `Ok` value (TypeBox, or a Standard Schema with JSON Schema export).
   * It types the handler (through `createAction`), describes the response in the OpenAPI document,
   * and serializes the envelope with a compiled serializer that drops undeclared fields.
   */
  output?: ValidationSchema | null
  /**
   * Returns a Result; or, for a streaming action, is an async generator function (or returns an
   * `AsyncIterable`, with `stream: true`): each yielded value is one event, and `output` then
   * describes each event.
   */
  handler: ActionHandler<TInput, TOutput> | StreamHandler<TInput, any, any>
  /**
   * A streaming action (docs/streaming.md). Found by itself when the handler is an async generator
   * function; set it when the handler is a plain function that returns an `AsyncIterable`.
   */
  stream?: boolean
  /**
   * A streaming action that a client may resume after a dropped connection (docs/streaming.md#resume):
   * called again with `Last-Event-ID`, it runs with `context.lastEventId` and continues from its own
   * store. Any other streaming action answers such a request `204` and does not run again.
   */
  resumable?: boolean
  /**
   * The errors callers can tell apart, by code: `{ NOT_FOUND: { status: 404, data: Type.Object({ id: Type.String() }) } }`.
   * The handler returns one with `Fail(code, data?, message?)`; a streaming action's generator too
   * (`return Fail(...)`: its error event). See docs/errors.md.
   */
  errors?: ErrorDeclarations
  isProtected?: boolean
  accessControl?: string[]
  /** `rest: false` hides the action from explore/schema (it can still be executed) and from MCP; `mcp: false` hides it from MCP only. */
  visibility?: { rest?: boolean; rpc?: boolean; mcp?: boolean }
  hooks?: ActionHooks
  meta?: Record<string, unknown>
  isSpecial?: ActionSpecial
  /**
   * The action is on its way out (docs/guides.md): REST answers carry `Deprecation` (and, with a
   * sunset, `Sunset`) headers, the OpenAPI operation is `deprecated`, the MCP tool's description and
   * explore start with the notice, the typed client's method is `@deprecated`, and
   * `fastify-actions diff` calls its removal after the sunset expected. Dates are ISO 8601.
   */
  deprecated?: Deprecation
  /**
   * Per-action timeout in ms; overrides `ServerConfig.actionTimeout`. For a streaming action: the
   * longest silence allowed between two events.
   */
  timeout?: number
  /**
   * Idempotency keys (docs/idempotency.md): `'required'` refuses a call without an `Idempotency-Key`
   * header (400); `'optional'` honours one when sent. A repeat with the same key answers the stored
   * answer without running the handler again. A streaming action cannot declare it (`FA_ERR_CONFIG`).
   */
  idempotency?: IdempotencyMode
}

/** How an action takes `Idempotency-Key`s. */
export type IdempotencyMode = 'required' | 'optional'

/** True for a streaming action: `stream: true`, or a handler that is an async generator function. */
export function isStreamingAction(action: Pick<Action, 'handler' | 'stream'>): boolean {
  return action.stream === true || Object.prototype.toString.call(action.handler) === '[object AsyncGeneratorFunction]'
}

/**
 * Whether `explore`, `schema`, the OpenAPI document, per-action routes and MCP may show the action:
 * every action but those with `visibility.rest: false` (which stay executable on the one endpoint).
 */
export function isVisibleToRest(action: Action): boolean {
  return action.visibility?.rest !== false
}

/** A named group of actions. */
export interface Service {
  name: string
  description: string
  actions: Action[]
  meta?: Record<string, unknown>
}

export interface BeforeActionHandlerArgs {
  nileContext: ServerContext
  action: Action
  payload: unknown
}

export interface AfterActionHandlerArgs extends BeforeActionHandlerArgs {
  result: Result<unknown, string>
}

export type BeforeActionHandler = (args: BeforeActionHandlerArgs) => Result<unknown, string> | Promise<Result<unknown, string>>
export type AfterActionHandler = (args: AfterActionHandlerArgs) => Result<unknown, string> | Promise<Result<unknown, string>>

/** An action as written: its `validation` schema decides the type of the handler's `data`. */
export type ActionDefinition<S extends ValidationSchema | null | undefined, TOutput> = Omit<
  Action<InferInput<S>, TOutput>,
  'validation' | 'handler'
> & { validation?: S; handler: ActionHandler<InferInput<S>, TOutput> }

// ---- End-to-end types (issue 13): what `createAction` keeps for the typed client. ----

/** `Action['visibility']`, kept as written so `{ rest: false }` stays a literal type. */
export type ActionVisibility = NonNullable<Action['visibility']>

/**
 * An action that remembers, in its type, its literal `name`, its `validation` schema, its handler's
 * `Ok` type, its `visibility` and its `isSpecial`: the typed client reads them (no code generation).
 * At run time it is the very object given to `createAction`.
 */
export type TypedAction<
  N extends string = string,
  S extends ValidationSchema | null | undefined = ValidationSchema | null | undefined,
  TOutput = unknown,
  V extends ActionVisibility | undefined = ActionVisibility | undefined,
  X extends ActionSpecial | undefined = ActionSpecial | undefined,
  E extends ErrorDeclarations = ErrorDeclarations,
> = Omit<Action<InferInput<S>, TOutput>, 'name' | 'validation' | 'visibility' | 'isSpecial' | 'errors' | 'handler'> & {
  handler: ActionHandler<InferInput<S>, TOutput>
  name: N
  validation?: S
  visibility?: V
  isSpecial?: X
  errors?: E
}

/** A deprecated action keeps its `deprecated` in its type: the typed client marks its method `@deprecated`. */
export type DeprecatedMark<D> = [D] extends [Deprecation] ? { deprecated: D } : unknown

/** What `createAction` takes besides the inferred fields: the handler may return `Ok`, a plain `Err`, or a `Fail` of `E`. */
type Definition<S extends ValidationSchema | null | undefined, TOutput, E extends ErrorDeclarations> = Omit<
  ActionDefinition<S, TOutput>,
  'name' | 'visibility' | 'isSpecial' | 'output' | 'handler' | 'errors'
> & {
  handler: ActionHandler<InferInput<S>, TOutput, PlainErr | NoInfer<DeclaredFailureOf<E>>>
  errors?: E
}

/**
 * A streaming action as `createAction` returns it: a TypedAction whose handler yields `TEvent` and
 * returns `TFinal`; `EventOf` and `FinalOf` (lib/service.ts) read them back for the client.
 */
export type TypedStreamAction<
  N extends string = string,
  S extends ValidationSchema | null | undefined = ValidationSchema | null | undefined,
  TEvent = unknown,
  TFinal = unknown,
  V extends ActionVisibility | undefined = ActionVisibility | undefined,
  X extends ActionSpecial | undefined = ActionSpecial | undefined,
  E extends ErrorDeclarations = ErrorDeclarations,
> = Omit<TypedAction<N, S, never, V, X, E>, 'handler'> & { handler: StreamHandler<InferInput<S>, TEvent, TFinal> }

/** A streaming action's event type: its `output` schema's, else what the handler yields. */
type EventType<O, TEvent> = [O] extends [ValidationSchema] ? InferOutputSchema<O> : TEvent

/**
 * The final value of a generator that returns `R`: its failures (`Err`, `Fail`: the error event) left
 * out, an `Ok` unwrapped; `void` when it can only fail or returns nothing.
 */
type FinalFrom<R> = [Exclude<R, { ok: false }>] extends [never] ? void : UnwrapOk<Exclude<R, { ok: false }>>
type UnwrapOk<F> = F extends { ok: true; value: infer V } ? V : F

/**
 * A generator may end with a plain `Err` or a `Fail` of a declared code; any other `Fail` makes the
 * handler a type error (as a non-streaming handler's does).
 */
type ReturnsDeclared<R, E extends ErrorDeclarations> = [Extract<R, { ok: false }>] extends [PlainErr | DeclaredFailureOf<E>]
  ? unknown
  : { handler: 'returns a Fail whose code is not declared in errors' }

/** The generator's whole return type `R` is inferred (its value, `Ok`, `Err` or `Fail`), then sorted by `FinalFrom`. */
type StreamDefinition<S extends ValidationSchema | null | undefined, TEvent, R, E extends ErrorDeclarations> = Omit<
  Action<InferInput<S>>,
  'name' | 'validation' | 'visibility' | 'isSpecial' | 'output' | 'handler' | 'errors'
> & {
  validation?: S
  errors?: E
  /** A stream cannot be replayed: a streaming action takes no idempotency keys. */
  idempotency?: never
  handler: (data: InferInput<S>, context: ServerContext) => AsyncGenerator<TEvent, R, undefined> | AsyncIterable<TEvent> | Promise<AsyncIterable<TEvent>>
}

/**
 * Defines an action; the handler's `data` is typed from `validation`, and the result keeps the types the client needs.
 * `NoInfer<V>`, `NoInfer<X>` and `NoInfer<D>` in the return types: inside `createService({ actions: [...] })`
 * the call has `Action` as its contextual type, which would otherwise fill the ones its definition leaves
 * out (a `visibility` of `{ rest?: boolean }` hid the client's method, an `isSpecial` made it an upload).
 * With an `output` schema the handler must return `Ok` of that schema's type, and the client's success type follows it.
 * A handler that is an async generator function makes a streaming action: `output` is then the schema of each event.
 */
export function createAction<
  const N extends string,
  O extends ValidationSchema,
  S extends ValidationSchema | null | undefined = undefined,
  const V extends ActionVisibility | undefined = undefined,
  const X extends ActionSpecial | undefined = undefined,
  E extends ErrorDeclarations = {},
  const D extends Deprecation | undefined = undefined,
>(
  definition: Definition<S, InferOutputSchema<O>, E> & {
    name: N
    output: O
    visibility?: V
    isSpecial?: X
    deprecated?: D
  },
): TypedAction<N, S, InferOutputSchema<O>, NoInfer<V>, NoInfer<X>, E> & { output: O } & DeprecatedMark<NoInfer<D>>
export function createAction<
  const N extends string,
  S extends ValidationSchema | null | undefined = undefined,
  TOutput = unknown,
  const V extends ActionVisibility | undefined = undefined,
  const X extends ActionSpecial | undefined = undefined,
  E extends ErrorDeclarations = {},
  const D extends Deprecation | undefined = undefined,
>(
  definition: Definition<S, TOutput, E> & { name: N; visibility?: V; isSpecial?: X; output?: null; deprecated?: D },
): TypedAction<N, S, TOutput, NoInfer<V>, NoInfer<X>, E> & DeprecatedMark<NoInfer<D>>
export function createAction<
  const N extends string,
  TEvent,
  S extends ValidationSchema | null | undefined = undefined,
  O extends ValidationSchema | null | undefined = undefined,
  R = void,
  const V extends ActionVisibility | undefined = undefined,
  const X extends ActionSpecial | undefined = undefined,
  E extends ErrorDeclarations = {},
  const D extends Deprecation | undefined = undefined,
>(
  definition: StreamDefinition<S, EventType<O, TEvent>, R, E> & { name: N; output?: O; visibility?: V; isSpecial?: X; deprecated?: D } & ReturnsDeclared<R, E>,
): TypedStreamAction<N, S, EventType<O, TEvent>, FinalFrom<R>, NoInfer<V>, NoInfer<X>, E> & { output?: O } & DeprecatedMark<NoInfer<D>>
export function createAction(definition: Action): Action {
  return definition
}
// ---- End of the end-to-end types block. ----

/** Wraps a list of actions (optional; a plain array works the same). */
export function createActions<const T extends Action[]>(actions: T): T {
  return actions
}

/** Wraps a list of services (optional; a plain array works the same). Keeps each service's type for `createClient<typeof services>`. */
export function createServices<const T extends Service[]>(services: T): T {
  return services
}
