import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks'
import type { AuthResult } from './auth.js'
import { Cancellation, neverAborted } from './cancellation.js'
import { ErrNotInitialized } from './errors.js'
import type { ServiceLogger } from './logger.js'

/** What a server carries for its actions: a logger, a database, a cache, anything else. */
export interface Resources<TDB = unknown> {
  logger?: ServiceLogger
  database?: TDB
  cache?: unknown
  [key: string]: unknown
}

export type SessionName = 'rest' | 'ws' | 'rpc'
export type SessionData = Record<string, unknown>

/** What one request sees: nothing in it is shared with another request. */
export interface RequestStore {
  /** The request being served, as its adapter describes it (the REST adapter: `{ req, reply }`). */
  rest?: unknown
  ws?: unknown
  rpc?: unknown
  sessions: Partial<Record<SessionName, SessionData>>
  auth?: AuthResult
  /** The context of the server (or plugin registration) serving this request. */
  context?: ServerContext<any>
  /**
   * The request's own signal (the REST adapter's aborts when the client disconnects or the server
   * shuts down), made on the first call. Each execution's `context.signal` follows it.
   */
  signal?: () => AbortSignal | undefined
  /** The `Last-Event-ID` a client sent to resume a `resumable` stream (docs/streaming.md#resume). */
  lastEventId?: string
}

export interface HookLogEntry {
  /** `service.action` of the hook. */
  name: string
  input: unknown
  output: unknown
  passed: boolean
}

/** The state of one execution, shared by its hooks. */
export interface HookContext {
  actionName: string
  input: unknown
  state: Record<string, unknown>
  log: { before: HookLogEntry[]; after: HookLogEntry[] }
  error?: string
  output?: unknown
}

export type AuthUser = Record<string, unknown> & { userId: string; organizationId?: string }

/** What the scope holds: the current request's store and the execution in progress, each optional. */
interface Scope {
  readonly request: RequestStore | undefined
  readonly execution: Execution | undefined
  /**
   * The async resource of the outermost scope: on Node 24 and later it holds the async context that
   * scope was entered from (`outsideRequestScope`).
   */
  readonly outer: AsyncResource
}

/**
 * One execution as its scope holds it: its cancellation, and its hook context, made when first read
 * (`context.hookContext` and the hook methods) when the engine does not make it up front: an action
 * with nothing before or after its handler (the engine's plain path) never reads it itself.
 */
export interface Execution {
  hook: HookContext | undefined
  readonly actionName: string
  readonly input: unknown
  readonly cancellation: Cancellation | undefined
}

/** The execution's hook context, made on first use. */
export function hookContextOf(execution: Execution): HookContext {
  return (execution.hook ??= createHookContext(execution.actionName, execution.input))
}

// One AsyncLocalStorage for both: on Node 20 every promise created runs a propagation step per storage.
const scopeStorage = new AsyncLocalStorage<Scope>()

/** The async resource of one scope (it restores the prior async context itself when the scope ends). */
const SCOPE_RESOURCE = 'fastify-actions.scope'

function enterThenRun<A, T>(scope: Scope, fn: (arg: A) => T, arg: A): T {
  scopeStorage.enterWith(scope)
  return fn(arg)
}

/**
 * Runs `fn` in `scope`, then leaves the async context exactly as it was, not a copy of it.
 *
 * On Node 24 and 26 the stores live in an AsyncContextFrame, and `AsyncLocalStorage.run` ends by
 * entering the prior store again: a new frame, a copy of the prior one. Whatever runs after it in the
 * same turn (Fastify writing the answer) makes its async resources in that copy, and the connection's
 * keep-alive timer keeps it until the connection's next request: one young object per open
 * connection, which every scavenge copies and which doubled the young generation under load
 * (docs/benchmarks.md, "When the young generation doubles"). `runInAsyncScope` puts the prior frame
 * itself back, and entering the scope inside it makes one frame instead of two (142 against 212 ns
 * per scope on Node 24, 165 against 218 on Node 26). Node 20 keeps stores on the async resource,
 * where this costs about 50 ns more than `run`.
 */
function runInScope<A, T>(request: RequestStore | undefined, execution: Execution | undefined, fn: (arg: A) => T, arg: A): T {
  const resource = new AsyncResource(SCOPE_RESOURCE, { requireManualDestroy: true })
  const scope: Scope = { request, execution, outer: scopeStorage.getStore()?.outer ?? resource }
  return resource.runInAsyncScope(enterThenRun<A, T>, null, scope, fn, arg)
}

/** Runs `fn` with `store` as the current request store (the execution in progress, if any, stays). */
export function runInRequestScope<T>(store: RequestStore, fn: () => T): T {
  return runInScope(store, scopeStorage.getStore()?.execution, fn, undefined)
}

/**
 * Runs `fn` outside any request or execution scope: in the async context the outermost scope was
 * entered from (the very one, not a copy). For work a request starts but that must not carry it: an
 * async resource made inside the scope (a socket write, the keep-alive timer armed when an answer
 * finishes) keeps the scope, and through it the request, alive until the resource is gone.
 * `AsyncLocalStorage.exit` would do that too, but on Node 24 and 26 in a new frame, a copy, which the
 * connection's keep-alive timer then keeps: one object per request and open connection. So on those,
 * every store is as it was when the outermost scope was entered: one entered inside the scope (a
 * tracer's span for the handler) is not current in `fn`, nor kept by what `fn` makes. Where
 * resources hold what is entered in them (Node 20 and 22), `exit` is used: only this store is cleared.
 */
export function outsideRequestScope<T>(fn: () => T): T {
  const scope = scopeStorage.getStore()
  if (!scope) return fn()
  return (resourcesKeepTheirContext ??= probeResources()) ? scope.outer.runInAsyncScope(fn) : scopeStorage.exit(fn)
}

/** `probeResources()`, asked once, on the first write outside a scope (nothing runs at import). */
let resourcesKeepTheirContext: boolean | undefined

/**
 * True when entering a store inside `runInAsyncScope` leaves the resource's own context as it was
 * (Node 24 and later: the context is a frame the resource points to). Node 20 (and Node 22, or 24
 * with `--no-async-context-frame`) sets the store on the current resource itself, so the outermost
 * scope's resource holds the scope, not the context before it; there `exit` is used, which makes
 * nothing new on those.
 */
function probeResources(): boolean {
  const probe = new AsyncResource(SCOPE_RESOURCE, { requireManualDestroy: true })
  const marker: Scope = { request: undefined, execution: undefined, outer: probe }
  probe.runInAsyncScope(() => scopeStorage.enterWith(marker))
  return probe.runInAsyncScope(() => scopeStorage.getStore()) !== marker
}

/** True inside a request or execution scope. */
export function inRequestScope(): boolean {
  return scopeStorage.getStore() !== undefined
}

/** The current request's store, or undefined outside a request. */
export function getRequestStore(): RequestStore | undefined {
  return scopeStorage.getStore()?.request
}

export function createRequestStore(rest?: unknown, context?: ServerContext<any>, signal?: RequestStore['signal']): RequestStore {
  return { rest, sessions: {}, context, signal }
}

export function createHookContext(actionName: string, input: unknown): HookContext {
  return { actionName, input, state: {}, log: { before: [], after: [] } }
}

/**
 * Runs `fn(execution)`, one execution of an action in its own scope, for `request` when given (a
 * caller that did not enter the request's scope), else for the current request, if any. One scope
 * entry: the execution's scope is the request's too.
 */
export function runInExecutionScope<E extends Execution, T>(execution: E, fn: (execution: E) => T, request?: RequestStore): T {
  return runInScope(request ?? scopeStorage.getStore()?.request, execution, fn, execution)
}

/** The cancellation of the execution in progress, if any. */
export function currentCancellation(): Cancellation | undefined {
  return scopeStorage.getStore()?.execution?.cancellation
}

/**
 * The current scope, captured: the returned function runs `fn` inside it. A stream's generator runs
 * when its consumer pulls, so each pull re-enters the execution's scope through it. The whole async
 * context is captured (`AsyncLocalStorage.snapshot`: the caller's other stores too, a tracer's), and
 * re-entering it only switches to the captured frame: `scopeStorage.run` would build a new frame per
 * pull (and another to restore the prior one), the largest cost of an event on Node 24 and 26.
 */
export function captureScope(): <R>(fn: () => R) => R {
  const scope = scopeStorage.getStore()
  if (!scope) return (fn) => fn()
  const snapshot = AsyncLocalStorage.snapshot()
  // Already inside it (a consumer that pulls from within the scope): no switch per pull.
  return (fn) => (scopeStorage.getStore() === scope ? fn() : snapshot(fn))
}

const requestScopedKeys = new Set(['rest', 'ws', 'rpc'])

/** The one context of a server: resources, a key-value store, sessions, and the current execution's hook state. */
export class ServerContext<TDB = unknown> {
  readonly resources: Resources<TDB>
  readonly #values = new Map<string, unknown>()
  readonly #sessions: Partial<Record<SessionName, SessionData>> = {}
  // Used only when hook methods are called outside an execution (at boot, in a script).
  #idleHookContext: HookContext = createHookContext('', undefined)

  constructor(resources: Resources<TDB> = {}) {
    this.resources = resources
  }

  /** The backing map of `set`/`get`, as a read-only view. */
  readonly store: ReadonlyMap<string, unknown> = readOnlyView(this.#values)

  /** `rest`, `ws` and `rpc` are the current request's; every other key is shared. */
  get<T = unknown>(key: string): T | undefined {
    if (requestScopedKeys.has(key)) return getRequestStore()?.[key as SessionName] as T | undefined
    return this.#values.get(key) as T | undefined
  }

  set<T>(key: string, value: T): void {
    if (requestScopedKeys.has(key)) {
      const store = getRequestStore()
      if (store) store[key as SessionName] = value as never
      return
    }
    this.#values.set(key, value)
  }

  /** Inside a request the session belongs to that request; outside, to this context. */
  setSession(name: SessionName, data: SessionData): void {
    const sessions = getRequestStore()?.sessions ?? this.#sessions
    sessions[name] = data
  }

  getSession(name: SessionName): SessionData | undefined {
    const sessions = getRequestStore()?.sessions ?? this.#sessions
    return sessions[name]
  }

  /**
   * The execution's AbortSignal: aborts when the client disconnects, the action's timeout fires, the
   * server shuts down or (for a stream) the stream is closed; its `reason` is an `FA_ERR_ABORTED`
   * error saying which. Outside an execution: a signal that never aborts.
   */
  get signal(): AbortSignal {
    return scopeStorage.getStore()?.execution?.cancellation?.signal ?? neverAborted
  }

  /**
   * For a `resumable` streaming action called again by a client that lost its connection: the id of
   * the last event it received (its `Last-Event-ID`), so the handler continues after it. Otherwise undefined.
   */
  get lastEventId(): string | undefined {
    return getRequestStore()?.lastEventId
  }

  /** The hook context of the execution in progress. */
  get hookContext(): HookContext {
    const execution = scopeStorage.getStore()?.execution
    return execution ? hookContextOf(execution) : this.#idleHookContext
  }

  resetHookContext(actionName: string, input: unknown): void {
    const fresh = createHookContext(actionName, input)
    const execution = scopeStorage.getStore()?.execution
    // The same object, emptied: whoever holds the execution's hook context sees the reset.
    if (execution) Object.assign(hookContextOf(execution), fresh, { error: undefined, output: undefined })
    else this.#idleHookContext = fresh
  }

  updateHookState(key: string, value: unknown): void {
    this.hookContext.state[key] = value
  }

  addHookLog(phase: 'before' | 'after', entry: HookLogEntry): void {
    this.hookContext.log[phase].push(entry)
  }

  setHookError(error: string): void {
    this.hookContext.error = error
  }

  setHookOutput(output: unknown): void {
    this.hookContext.output = output
  }

  /** The verified identity of the current request, or undefined. */
  getAuth(): AuthResult | undefined {
    return getRequestStore()?.auth
  }

  getUser(): AuthUser | undefined {
    const auth = this.getAuth()
    if (!auth) return undefined
    return { ...auth.claims, userId: auth.userId, organizationId: auth.organizationId }
  }
}

function readOnlyView<K, V>(map: Map<K, V>): ReadonlyMap<K, V> {
  const view: ReadonlyMap<K, V> = Object.freeze({
    get: (key: K) => map.get(key),
    has: (key: K) => map.has(key),
    get size() {
      return map.size
    },
    keys: () => map.keys(),
    values: () => map.values(),
    entries: () => map.entries(),
    forEach: (fn: (value: V, key: K, view: ReadonlyMap<K, V>) => void) => map.forEach((value, key) => fn(value, key, view)),
    [Symbol.iterator]: () => map.entries(),
  })
  return view
}

/** Creates a context; `createServer` makes the one a server uses. */
export function createContext<TDB = unknown>(params: { resources?: Resources<TDB> } = {}): ServerContext<TDB> {
  return new ServerContext<TDB>(params.resources)
}

let currentContext: ServerContext<any> | undefined

export function setCurrentContext(context: ServerContext<any> | undefined): void {
  currentContext = context
}

export function getCurrentContext(): ServerContext<any> | undefined {
  return currentContext
}

/**
 * The shared context. Inside a request: the context of the server (or plugin registration) serving
 * it. Outside a request: the one created last. Throws before any server exists.
 */
export function getContext<TDB = unknown>(): ServerContext<TDB> {
  const context = scopeStorage.getStore()?.request?.context ?? currentContext
  if (!context) throw new ErrNotInitialized()
  return context as ServerContext<TDB>
}
