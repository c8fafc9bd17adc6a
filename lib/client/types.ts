import type { ErrorsOf, EventOf, FinalOf, IsDeprecated, IsHiddenFromRest, IsStreamingAction, IsUploadAction, OutputOf, PayloadOf } from '../service.js'
import type { ClientError, ClientErrorCode, StreamErrorOf } from './errors.js'
import type { FileInput } from './files.js'
import type { Result } from './result.js'

/** What every call resolves to: never a throw. */
export type ClientResult<T> = Result<T, ClientError>

/** Per-call options; each overrides the client's default of the same name. */
export interface CallOptions {
  /** Aborts the call (`FA_CLIENT_ABORTED`); the client's default `signal` aborts it too. For a stream: also once it started. */
  signal?: AbortSignal
  /** Milliseconds before the call gives up (`FA_CLIENT_TIMEOUT`); 0 for none. For a stream: until the stream starts. */
  timeout?: number
  /** Merged over the client's headers; `Content-Type` stays the client's. */
  headers?: HeadersInit
  /**
   * The `Idempotency-Key` of this call (docs/idempotency.md); a lost answer is then retried with it.
   * Without it, calls of the actions in `ClientOptions.idempotent` get a fresh `crypto.randomUUID()`.
   */
  idempotencyKey?: string
}

export interface DiscoveryOptions extends CallOptions {
  /** Overrides the client's `discoverySecret`. */
  discoverySecret?: string
}

/**
 * What a streaming action's call resolves to (inside `Ok`): its events, one per value the handler
 * yields, read with `for await`. Read once: a second loop continues where the first one stopped.
 * Leaving the loop early (`break`, `return`, a throw) or `close()` ends the request, and the server
 * sees the disconnect. A failure after the stream started (the server's `error` event, a cut
 * connection, the call's `signal`) ends the loop with a thrown `StreamError` that carries the
 * message and the code, as a `ClientError` does.
 */
export interface EventStream<E, F = unknown, Er = ClientError> extends AsyncIterable<E> {
  /**
   * Settles once the stream has ended (the loop ran to its end, or the stream was closed): `Ok` with
   * the handler's return value (unwrapped as a call's value is, `{}` when it returns nothing), or
   * the `Err` that ended the loop. Never rejects. Events nobody reads are never received: await it
   * after the loop, or drain the stream first.
   */
  readonly final: Promise<Result<F, Er>>
  /** The `id` of the last event received (`''` before the first). */
  readonly lastEventId: string
  /** Ends the request now; the loop, if one is running, ends without an error. Safe to call twice. */
  close(): void
  /**
   * True when `error` (what a `for await` over this stream threw) is a `StreamError`, typed by the
   * action: then `error.code === 'QUOTA'` narrows `error.data` to that declared error's data.
   */
  isError(error: unknown): error is StreamErrorOf<Er>
}

/** The value as it comes out of JSON: dates become strings, bigints strings (the server's rule), functions vanish. */
export type Json<T> = T extends { toJSON(...args: any[]): infer J }
  ? Json<J>
  : T extends string | number | boolean | null
    ? T
    : T extends bigint
      ? string
      : T extends undefined | symbol | ((...args: any[]) => any)
        ? undefined
        : T extends readonly (infer E)[]
          ? Json<E>[]
          : T extends object
            ? { [K in keyof T as T[K] extends symbol | ((...args: any[]) => any) ? never : K]: Json<T[K]> }
            : unknown

type IsJsonObject<T> = T extends object ? (T extends readonly unknown[] ? false : true) : false
type OnlyResultKey<T> = [keyof T] extends ['result'] ? (['result'] extends [keyof T] ? true : false) : false

/**
 * The success value the client hands back. The envelope sends a non-object `Ok` value as
 * `data: { result }`; the client unwraps it, so this is the handler's own value. The one
 * ambiguity: an object whose only key is `result` holding a non-object comes back unwrapped too.
 * `Ok(undefined)` arrives as `{}`.
 */
export type Delivered<T> = 0 extends 1 & T
  ? any
  : [T] extends [void]
  ? Record<string, never>
  : T extends unknown
    ? IsJsonObject<T> extends true
      ? OnlyResultKey<T> extends true
        ? IsJsonObject<T[keyof T & 'result']> extends true
          ? T
          : T[keyof T & 'result']
        : T
      : T
    : never

/** The typed success value of an action. */
export type OutputFor<A> = Delivered<Json<OutputOf<A>>>

/**
 * What a streaming action's call gives: its events as JSON delivers what the handler yields (the
 * `output` schema's type when it has one), its final value unwrapped like a call's value.
 */
export type StreamFor<A> = EventStream<Json<EventOf<A>>, FinalFor<A>, ErrorFor<A>>

/** A generator that returns nothing ends with `data: {}`. */
type FinalFor<A> = [FinalOf<A>] extends [void] ? Record<string, never> : Delivered<Json<FinalOf<A>>>

/** The success value of a call: an `EventStream` for a streaming action, else the action's value. */
export type CallValue<A> = IsStreamingAction<A> extends true ? StreamFor<A> : OutputFor<A>

type ActionsOf<S> = S extends { actions: readonly (infer A)[] } ? A : never
type NameOf<A> = A extends { name: infer N extends string } ? N : never
// A Proxy cannot answer `then` or `toJSON` (await and JSON.stringify probe them): such names go through `invoke`.
type ProbedName = 'then' | 'toJSON'

type JsonActions<S> = ActionsOf<S> extends infer A
  ? A extends unknown
    ? IsHiddenFromRest<A> extends true
      ? never
      : IsUploadAction<A> extends true
        ? never
        : NameOf<A> extends ProbedName
          ? never
          : A
    : never
  : never

type UploadActions<S> = ActionsOf<S> extends infer A
  ? A extends unknown
    ? IsHiddenFromRest<A> extends true
      ? never
      : IsUploadAction<A> extends true
        ? A
        : never
    : never
  : never

/**
 * A declared error as the client receives it: `code` is the declared code and `data` the error's
 * data with the code beside it (`{ code: 'NOT_FOUND', id: 't-9' }`).
 */
export interface DeclaredError<C extends string = string, D extends object = Record<string, unknown>> extends ClientError {
  code: C
  data: D & { code: C }
}

/**
 * Every other error of a call to an action that declares errors: a `FA_CLIENT_*` code (no answer, or no
 * envelope), or no code (a framework failure such as `Validation failed`, or the handler's plain `Err`).
 */
export interface UndeclaredError extends Omit<ClientError, 'code'> {
  code?: ClientErrorCode
}

/** The declared errors of an action, one member per code, so `error.code === 'NOT_FOUND'` narrows `error.data`. */
export type DeclaredErrorOf<A> = { [C in keyof ErrorsOf<A> & string]: DeclaredError<C, DeclaredDataShape<ErrorsOf<A>[C]>> }[keyof ErrorsOf<A> & string]

// A declaration without a data schema sends the code alone.
type DeclaredDataShape<D> = [NonNullable<D>] extends [Record<string, never>] ? {} : Json<NonNullable<D>> & object

/** The error side of a typed call: `ClientError` for an action without declared errors, else its declared errors or an `UndeclaredError`. */
export type ErrorFor<A> = [DeclaredErrorOf<A>] extends [never] ? ClientError : DeclaredErrorOf<A> | UndeclaredError

/** What a typed call resolves to. */
/** What a typed call resolves to: for a streaming action, its `EventStream`. */
export type ActionResult<A> = Result<CallValue<A>, ErrorFor<A>>

/** One typed call: the payload may be left out when the schema requires nothing; a deprecated action's call is `@deprecated`. */
export type ActionCall<A> = {} extends PayloadOf<A>
  ? IsDeprecated<A> extends true
    ? DeprecatedCallWithoutPayload<PayloadOf<A>, ActionResult<A>>
    : (payload?: PayloadOf<A>, options?: CallOptions) => Promise<ActionResult<A>>
  : IsDeprecated<A> extends true
    ? DeprecatedCall<PayloadOf<A>, ActionResult<A>>
    : (payload: PayloadOf<A>, options?: CallOptions) => Promise<ActionResult<A>>

/** The call of a deprecated action (`deprecated` on its `createAction`): editors strike it through. */
export interface DeprecatedCall<P, R> {
  /**
   * @deprecated The server deprecates this action: read its notice (since, sunset, replacement) with
   * `client.explore(service, action)` or in the OpenAPI document, and move to its replacement.
   */
  (payload: P, options?: CallOptions): Promise<R>
}

/** The call of a deprecated action whose payload may be left out. */
export interface DeprecatedCallWithoutPayload<P, R> {
  /**
   * @deprecated The server deprecates this action: read its notice (since, sunset, replacement) with
   * `client.explore(service, action)` or in the OpenAPI document, and move to its replacement.
   */
  (payload?: P, options?: CallOptions): Promise<R>
}

/** `client.<service>`: one method per action reachable over REST with a JSON body. */
export type ServiceClient<S> = { [A in JsonActions<S> as NameOf<A>]: ActionCall<A> }

/** The form of an upload: files by field name (one or several per key) and text fields. */
export interface UploadInput {
  files?: Record<string, FileInput | FileInput[]>
  fields?: Record<string, string | string[]>
}

/** The text fields an upload action declares in its schema (`{ fields: {...}, files: {...} }`), else any. */
type UploadFieldsOf<A> = PayloadOf<A> extends { fields: infer F } ? F : Record<string, string | string[]>
type UploadFilesOf<A> = PayloadOf<A> extends { files: infer F }
  ? { [K in keyof F]: F[K] extends readonly unknown[] ? FileInput[] : FileInput | FileInput[] }
  : Record<string, FileInput | FileInput[]>

/** The typed upload input of an `isSpecial` action. */
export type UploadInputFor<A> = { files: UploadFilesOf<A>; fields?: UploadFieldsOf<A> } | ({} extends UploadFilesOf<A> ? { files?: UploadFilesOf<A>; fields?: UploadFieldsOf<A> } : never)

/** Service names the client's own methods use: refused by `createClient<typeof services>`. */
export type ReservedServiceName = 'invoke' | 'explore' | 'schema' | 'upload' | ProbedName

/**
 * What the client needs of a service type: its name and its actions' names. Structural on purpose:
 * the services type usually comes from the server's own project, with its own copy of
 * fastify-actions, whose `Service` (through `ServerContext`, a class with private members) is
 * another type to TypeScript than this copy's. Every typed detail of an action (its input, output,
 * visibility, uploads) is read from the action's own type by inference, never by identity.
 */
export interface ServiceShape {
  readonly name: string
  readonly actions: readonly ActionShape[]
}

/** What the client needs of an action type: its name (the rest is inferred from the action itself). */
export interface ActionShape {
  readonly name: string
}

type Services = readonly ServiceShape[]
type IsUntyped<T extends Services> = string extends T[number]['name'] ? true : false

type UntypedCall = (payload?: Record<string, unknown>, options?: CallOptions) => Promise<ClientResult<unknown>>

/** The typed services of `createClient<typeof services>`: `api.tasks.create(payload)`. */
export type InferApi<T extends Services> = IsUntyped<T> extends true
  ? { readonly [service: string]: { readonly [action: string]: UntypedCall } }
  : { readonly [S in T[number] as S['name']]: ServiceClient<S> }

/** Service name → action name → the action, for the upload actions. */
type UploadTable<T extends Services> = IsUntyped<T> extends true
  ? Record<string, Record<string, unknown>>
  : { [S in T[number] as [UploadActions<S>] extends [never] ? never : S['name']]: { [A in UploadActions<S> as NameOf<A>]: A } }

type UploadResult<T extends Services, S, A> = IsUntyped<T> extends true
  ? unknown
  : S extends keyof UploadTable<T>
    ? A extends keyof UploadTable<T>[S]
      ? OutputFor<UploadTable<T>[S][A]>
      : unknown
    : unknown

type UploadInputOf<T extends Services, S, A> = IsUntyped<T> extends true
  ? UploadInput
  : S extends keyof UploadTable<T>
    ? A extends keyof UploadTable<T>[S]
      ? UploadInputFor<UploadTable<T>[S][A]>
      : UploadInput
    : UploadInput

/** The client's own methods, next to the services. */
export interface ClientMethods<T extends Services> {
  /** Any action by name, untyped: for names known only at run time. */
  invoke<R = unknown>(service: string, action: string, payload?: Record<string, unknown>, options?: CallOptions): Promise<ClientResult<R>>
  /** The `explore` intent: `('*')` lists services, `(service)` its actions, `(service, action)` one action. */
  explore(service?: string, action?: string, options?: DiscoveryOptions): Promise<ClientResult<Record<string, unknown>>>
  /** The `schema` intent: JSON Schemas keyed like `explore`. */
  schema(service?: string, action?: string, options?: DiscoveryOptions): Promise<ClientResult<Record<string, unknown>>>
  /** A multipart call to an `isSpecial` action: files and text fields, routing fields added by the client. */
  upload<S extends keyof UploadTable<T> & string, A extends keyof UploadTable<T>[S] & string>(
    service: S,
    action: A,
    input: UploadInputOf<T, S, A>,
    options?: CallOptions,
  ): Promise<ClientResult<UploadResult<T, S, A>>>
}

export type Client<T extends Services = ServiceShape[]> = InferApi<T> & ClientMethods<T>

/** `createClient<typeof services>` with a service named like a client method: a compile error that names it. */
export type ReservedNameCheck<T extends Services> = [Extract<T[number]['name'], ReservedServiceName>] extends [never]
  ? unknown
  : IsUntyped<T> extends true
    ? unknown
    : { 'rename these services, they collide with the client methods (or call them with client.invoke)': Extract<T[number]['name'], ReservedServiceName> }

/** A `fetch`: the global one, `server.rest.app.fetch`, or any other with the same signature. */
export type FetchLike = (input: Request | string | URL, init?: RequestInit) => Promise<Response>

export interface ClientOptions {
  /** The server's origin and base path, e.g. `http://localhost:8000/api`; the client posts to `${baseUrl}/services`. */
  baseUrl: string
  /** Default: the global `fetch`. `server.rest.app.fetch` runs calls in-process. */
  fetch?: FetchLike
  /** Sent with every call; per-call headers are merged over them. */
  headers?: HeadersInit
  /** A bearer token, or a function called before each request (return undefined to send none). */
  token?: string | (() => string | undefined | null | Promise<string | undefined | null>)
  /** `include` to send and receive cookies cross-origin (cookie auth); the fetch default otherwise. */
  credentials?: RequestCredentials
  /** Default timeout in ms for every call; none by default. */
  timeout?: number
  /** Aborts every call made by this client. */
  signal?: AbortSignal
  /** Sent as `payload.discoverySecret` with `explore` and `schema`. */
  discoverySecret?: string
  /**
   * The actions that declare `idempotency` on the server, as `'service.action'` (docs/idempotency.md):
   * each call sends a fresh `Idempotency-Key` and, when its answer is lost (a network error, 502, 503,
   * 504), is sent again with the same key, so it runs once.
   */
  idempotent?: readonly string[]
  /** How a call with an idempotency key retries a lost answer: `attempts` more sends (default 2), `delay` ms times the attempt between them (default 250); `false` for none. */
  retry?: false | { attempts?: number; delay?: number }
  /**
   * How a stream the server marks resumable (an action with `resumable: true`) continues after a
   * dropped connection: sent again with `Last-Event-ID`, after the server's `retry:` delay, at most
   * `attempts` times in a row without an event between them (default 5); `false` never resumes.
   * Other streams are never sent again: a drop ends their loop with a `StreamError`.
   */
  resume?: false | { attempts?: number }
}
