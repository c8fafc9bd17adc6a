import type { DeclaredFailureOf, ErrorDeclarations, PlainErr } from './declared-errors.js'
import type { ErrResult, OkResult, Result } from './result.js'
import type { InferInput, InferOutputSchema, ValidationSchema } from './validation.js'
import type { ServerContext } from './context.js'

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
  handler: ActionHandler<TInput, TOutput>
  /**
   * The errors callers can tell apart, by code: `{ NOT_FOUND: { status: 404, data: Type.Object({ id: Type.String() }) } }`.
   * The handler returns one with `Fail(code, data?, message?)`; see docs/errors.md.
   */
  errors?: ErrorDeclarations
  isProtected?: boolean
  accessControl?: string[]
  /** `rest: false` hides the action from explore/schema (it can still be executed) and from MCP; `mcp: false` hides it from MCP only. */
  visibility?: { rest?: boolean; rpc?: boolean; mcp?: boolean }
  hooks?: ActionHooks
  meta?: Record<string, unknown>
  isSpecial?: ActionSpecial
  /** Per-action timeout in ms; overrides `ServerConfig.actionTimeout`. */
  timeout?: number
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
  'validation'
> & { validation?: S }

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
> = Omit<Action<InferInput<S>, TOutput>, 'name' | 'validation' | 'visibility' | 'isSpecial' | 'errors'> & {
  name: N
  validation?: S
  visibility?: V
  isSpecial?: X
  errors?: E
}

/** What `createAction` takes besides the inferred fields: the handler may return `Ok`, a plain `Err`, or a `Fail` of `E`. */
type Definition<S extends ValidationSchema | null | undefined, TOutput, E extends ErrorDeclarations> = Omit<
  ActionDefinition<S, TOutput>,
  'name' | 'visibility' | 'isSpecial' | 'output' | 'handler' | 'errors'
> & {
  handler: ActionHandler<InferInput<S>, TOutput, PlainErr | NoInfer<DeclaredFailureOf<E>>>
  errors?: E
}

/**
 * Defines an action; the handler's `data` is typed from `validation`, and the result keeps the types the client needs.
 * With an `output` schema the handler must return `Ok` of that schema's type, and the client's success type follows it.
 */
export function createAction<
  const N extends string,
  O extends ValidationSchema,
  S extends ValidationSchema | null | undefined = undefined,
  const V extends ActionVisibility | undefined = undefined,
  const X extends ActionSpecial | undefined = undefined,
  E extends ErrorDeclarations = {},
>(
  definition: Definition<S, InferOutputSchema<O>, E> & {
    name: N
    output: O
    visibility?: V
    isSpecial?: X
  },
): TypedAction<N, S, InferOutputSchema<O>, V, X, E> & { output: O }
export function createAction<
  const N extends string,
  S extends ValidationSchema | null | undefined = undefined,
  TOutput = unknown,
  const V extends ActionVisibility | undefined = undefined,
  const X extends ActionSpecial | undefined = undefined,
  E extends ErrorDeclarations = {},
>(
  definition: Definition<S, TOutput, E> & { name: N; visibility?: V; isSpecial?: X; output?: null },
): TypedAction<N, S, TOutput, V, X, E>
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
