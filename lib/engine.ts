import type { Action, AfterActionHandler, BeforeActionHandler, Service } from './action.js'
import type { AuthResult } from './auth.js'
import { abortReason, abortReasons, Cancellation } from './cancellation.js'
import { captureScope, createHookContext, getRequestStore, runInExecutionScope, type Execution, type RequestStore, type ServerContext } from './context.js'
import { createDiagnostics, errorMessage, type Diagnostics } from './diagnostics.js'
import { isDeclaredFailure, resolveDeclared } from './declared-errors.js'
import { fail, type Failure } from './errors.js'
import { Guards, type Guard, type GuardSelector } from './guards.js'
import { messages } from './messages.js'
import { compileRegistry, tableOf, type ActionTable, type CompiledAction, type CompiledHook, type Registry } from './registry.js'
import { Err, Ok, isResult, type OkResult, type Result } from './result.js'
import { isThenable, run, settle, withDeadline, type Steps } from './steps.js'
import { createActionStream, isActionStream } from './stream.js'

/** What a caller may pass to one execution. */
export interface ExecuteOptions {
  /**
   * The caller's own signal: the execution's `context.signal` aborts with it. Without one, inside a
   * REST request, the request's (it aborts when the client disconnects or the server shuts down).
   */
  signal?: AbortSignal
  /**
   * The request this execution serves, for an adapter that has not entered the request's scope
   * (`runInRequestScope`): the execution's scope carries it, one scope instead of two. Inside a
   * request scope it is not needed: the execution takes the current request.
   */
  request?: RequestStore
}

/** Verifies the caller of a protected action; fills the request's auth result or answers an `FA_ERR_AUTH` failure. */
export type Authenticator = (context: ServerContext<any>) => Promise<Result<AuthResult, string>> | Result<AuthResult, string>

export interface EngineOptions {
  services: readonly Service[]
  diagnostics?: Diagnostics
  onBeforeActionHandler?: BeforeActionHandler
  onAfterActionHandler?: AfterActionHandler
  authenticate?: Authenticator
  /** Default handler timeout in ms. */
  actionTimeout?: number
  /**
   * The text a thrown exception answers with (the specification: its message). The composition
   * passes the data helpers' version, which gives a database error's own text without its SQL.
   */
  thrownMessage?: (error: unknown) => string
  /**
   * Observes each execution (the composition passes the OpenTelemetry one, lib/tracing.ts). Called
   * once per `executeAction`; `undefined` back means "not traced" and costs nothing more.
   */
  instrument?: Instrument
}

/** What an instrument learns of one execution. */
export interface ExecutionInfo {
  readonly service: string
  readonly action: string
  readonly intent: 'execute'
}

/** One traced execution: the pipeline reports its hooks and its end to it. */
export interface ExecutionTrace {
  /** Runs the execution inside the trace (so what the handler traces nests under it). */
  run<T>(fn: () => T): T
  /** A hook starts; the returned function is called with its result. */
  hook(name: string, phase: 'before' | 'after', critical: boolean): (result: Result<unknown, string>) => void
  /** The execution's final result (after the global after handler). */
  end(result: Result<unknown, string>): void
}

export type Instrument = (execution: ExecutionInfo) => ExecutionTrace | undefined

export interface Engine {
  getServices: () => OkResult<Service[]>
  /** The action table, compiled once at boot: what every adapter reads (validator, serializers, declared errors, visibility, route). */
  readonly table: ActionTable
  /** The service's actions, or an `FA_ERR_SERVICE_NOT_FOUND` failure. */
  getServiceActions: (service: string) => OkResult<Action[]> | Failure
  /** The action, or an `FA_ERR_SERVICE_NOT_FOUND` / `FA_ERR_ACTION_NOT_FOUND` failure. */
  getAction: (service: string, action: string) => OkResult<Action> | Failure
  /**
   * The one pipeline: auth, global before, before hooks, validation, handler, after hooks, global after. Never throws.
   * For a streaming action whose gate passed (auth, global before, before hooks, validation) the `Ok`
   * value is an `ActionStream` (lib/stream.ts, `isActionStream`): the events, then its `result` (the
   * final value after the after hooks and the global after handler). Refusals are plain `Err`s.
   */
  executeAction: (service: string, action: string, payload: unknown, context: ServerContext<any>, options?: ExecuteOptions) => Promise<Result<unknown, string>>
  /**
   * The same pipeline as `executeAction`, for adapters on a hot path: the Result itself when nothing
   * in the execution waited on a promise (no promise and no microtask made), else a promise of it.
   */
  execute: (service: string, action: string, payload: unknown, context: ServerContext<any>, options?: ExecuteOptions) => Result<unknown, string> | Promise<Result<unknown, string>>
  /** Sets the authenticator (the auth plugin does this at boot). */
  setAuthenticator: (authenticate: Authenticator | undefined) => void
  /**
   * Adds a guard for the actions `selector` names (lib/guards.ts): run for every call of them,
   * whichever way it came in, after auth and before everything else. `FA_ERR_CONFIG` on a bad selector.
   */
  addGuard: (selector: GuardSelector, guard: Guard<any>) => void
}

/** What every step of one execution reads: fixed at boot, except the authenticator the auth plugin sets. */
interface Pipeline {
  diagnostics: Diagnostics
  globalBefore?: BeforeActionHandler
  globalAfter?: AfterActionHandler
  authenticate?: Authenticator
  guards: Guards
  thrownMessage: (error: unknown) => string
  instrument?: Instrument
}

class ActionTimeout extends Error {
  constructor(readonly failure: Failure) {
    super(failure.error)
  }
}

/** A programming error: logged for the developer, the 500 for the client. */
function notAResult(pipeline: Pipeline, what: string): Failure {
  const failure = fail.notAResult(what)
  pipeline.diagnostics.error('engine.executeAction', failure.detail ?? failure.error)
  return failure
}

/** The timeout's failure; the execution's signal aborts with it. */
function timedOut(compiled: CompiledAction, timeout: number, cancellation: Cancellation | undefined): ActionTimeout {
  cancellation?.abort(abortReason(abortReasons.timeout(timeout)))
  return new ActionTimeout(fail.actionTimeout(compiled.name, timeout))
}

/**
 * The one validate-then-handler step, for every action and every hook: validation, then the handler,
 * with exceptions, non-Results and timeouts turned into failures. A streaming action's handler gives
 * its events: `Ok` of what it returned (its own `Err` or `Fail` refuses), and no deadline here (a
 * stream's timeout is the silence between its events, lib/stream.ts).
 */
function* runAction(pipeline: Pipeline, compiled: CompiledAction, input: unknown, context: ServerContext<any>, cancellation?: Cancellation): Steps<Result<unknown, string>> {
  let data = input
  if (compiled.validate) {
    const validated = compiled.validate(input)
    const checked = isThenable(validated) ? ((yield validated) as Awaited<typeof validated>) : validated
    if (!checked.ok) return fail.validation(checked.errors)
    data = checked.value
  }
  try {
    const pending = compiled.action.handler(data, context)
    const { timeout } = compiled
    const handled = timeout && !compiled.stream ? withDeadline(pending, timeout, () => timedOut(compiled, timeout, cancellation)) : pending
    const result = isThenable(handled) ? ((yield handled) as Awaited<typeof handled>) : handled
    if (!isResult(result)) return compiled.stream ? Ok(result) : notAResult(pipeline, compiled.name)
    return result.ok ? (result as Result<unknown, string>) : declaredOrPlain(pipeline, compiled, result as Result<unknown, string>)
  } catch (error) {
    if (error instanceof ActionTimeout) return error.failure
    return Err(pipeline.thrownMessage(error))
  }
}

/** A `Fail` checked against the action's declarations (an undeclared code is logged and becomes a plain Err); any other result as is. */
function declaredOrPlain(pipeline: Pipeline, compiled: CompiledAction, result: Result<unknown, string>): Result<unknown, string> {
  if (result.ok) return result
  return resolveDeclared(result, compiled.errors, (code) => pipeline.diagnostics.warn('engine.executeAction', messages.undeclaredError(compiled.name, code)))
}

/**
 * Hooks in order, each output the next input; a critical failure halts, any other is logged. A critical
 * hook's declared error that `owner` declares too is `owner`'s answer; any other halts as FA_ERR_HOOK_FAILED.
 */
function* runHooks(
  pipeline: Pipeline,
  owner: CompiledAction,
  hooks: CompiledHook[],
  phase: 'before' | 'after',
  input: unknown,
  context: ServerContext<any>,
  trace: ExecutionTrace | undefined,
): Steps<Result<unknown, string>> {
  let current = input
  for (const hook of hooks) {
    const traced = trace?.hook(hook.name, phase, hook.ref.isCritical)
    const result = yield* runAction(pipeline, hook.target, current, context)
    traced?.(result)
    context.addHookLog(phase, { name: hook.name, input: current, output: result.ok ? result.value : result.error, passed: result.ok })
    if (result.ok) {
      current = result.value
      continue
    }
    if (hook.ref.isCritical) {
      context.setHookError(result.error)
      if (isDeclaredFailure(result) && owner.errors?.has(result.code)) return result
      return fail.hookFailed(hook.name, result.error)
    }
    pipeline.diagnostics.warn('engine.runHooks', `Non-critical ${phase} hook '${hook.name}' failed: ${result.error}`)
  }
  return Ok(current)
}

/** The guards that select the action, in order: the first refusal is the answer (403 with its text). */
function* runGuards(pipeline: Pipeline, compiled: CompiledAction, guards: readonly Guard<any>[], payload: unknown, context: ServerContext<any>): Steps<Result<unknown, string> | undefined> {
  for (const guard of guards) {
    const verdict = yield* settle(guard({ service: compiled.serviceName, action: compiled.action, payload, nileContext: context }))
    if (!isResult(verdict)) return notAResult(pipeline, `a guard of ${compiled.name}`)
    if (!verdict.ok) return fail.guardRefused(verdict.error)
  }
  return undefined
}

/** Everything before the action's own handler: auth, the guards, the global before handler, the before hooks. */
function* runGate(
  pipeline: Pipeline,
  compiled: CompiledAction,
  payload: unknown,
  context: ServerContext<any>,
  trace: ExecutionTrace | undefined,
): Steps<Result<unknown, string>> {
  const { action } = compiled
  if (action.isProtected && pipeline.authenticate) {
    const auth = yield* settle(pipeline.authenticate(context))
    if (!auth.ok) return auth
  }
  const guards = pipeline.guards.for(compiled.serviceName, action.name)
  if (guards.length > 0) {
    const refused = yield* runGuards(pipeline, compiled, guards, payload, context)
    if (refused) return refused
  }
  if (pipeline.globalBefore) {
    const before = pipeline.globalBefore({ nileContext: context, action, payload })
    const gate = isThenable(before) ? ((yield before) as Awaited<typeof before>) : before
    if (!isResult(gate)) return notAResult(pipeline, 'onBeforeActionHandler')
    if (!gate.ok) return gate
  }
  if (compiled.before.length === 0) return Ok(payload)
  return yield* runHooks(pipeline, compiled, compiled.before, 'before', payload, context, trace)
}

function* runPipeline(
  pipeline: Pipeline,
  compiled: CompiledAction,
  payload: unknown,
  context: ServerContext<any>,
  cancellation: Cancellation,
  trace?: ExecutionTrace,
): Steps<Result<unknown, string>> {
  // Nothing before the handler (no auth, no global before handler, no before hooks): no gate to run.
  const gated = (compiled.action.isProtected && pipeline.authenticate) || pipeline.globalBefore || compiled.before.length > 0 || pipeline.guards.for(compiled.serviceName, compiled.action.name).length > 0
  let data = payload
  if (gated) {
    const input = yield* runGate(pipeline, compiled, payload, context, trace)
    // A declared error of the global before handler or of a critical before hook: the action's own.
    if (!input.ok) return 'code' in input && input.code === 'FA_ERR_GUARD_REFUSED' ? input : declaredOrPlain(pipeline, compiled, input)
    data = input.value
  }
  if (compiled.stream) return yield* startStream(pipeline, compiled, data, payload, context, cancellation, trace)
  const result = yield* runAction(pipeline, compiled, data, context, cancellation)
  if (compiled.after.length === 0 && !pipeline.globalAfter) return settleEnd(pipeline, compiled, result, context)
  return yield* runEnd(pipeline, compiled, payload, result, context, trace)
}

/** The end of every execution: the result settled against the action's declarations, the hook context's outcome set. */
function settleEnd(pipeline: Pipeline, compiled: CompiledAction, handled: Result<unknown, string>, context: ServerContext<any>): Result<unknown, string> {
  // Settled against this action's declarations (a hook's declared error carried its own).
  const result = handled.ok ? handled : declaredOrPlain(pipeline, compiled, handled)
  if (result.ok) context.setHookOutput(result.value)
  else context.setHookError(result.error)
  return result
}

/** After the handler (or a stream's end): the after hooks (on an `Ok`), the global after handler, the hook context's outcome. */
function* runEnd(
  pipeline: Pipeline,
  compiled: CompiledAction,
  payload: unknown,
  handled: Result<unknown, string>,
  context: ServerContext<any>,
  trace?: ExecutionTrace,
): Steps<Result<unknown, string>> {
  let result = handled
  if (result.ok && compiled.after.length > 0) result = yield* runHooks(pipeline, compiled, compiled.after, 'after', result.value, context, trace)
  if (pipeline.globalAfter) {
    const after = pipeline.globalAfter({ nileContext: context, action: compiled.action, payload, result })
    result = isThenable(after) ? ((yield after) as Awaited<typeof after>) : after
    if (!isResult(result)) return notAResult(pipeline, 'onAfterActionHandler')
  }
  return settleEnd(pipeline, compiled, result, context)
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
}

/**
 * A streaming action past its gate: the same validate-then-handler step as any action (`runAction`),
 * whose handler gives its events (an async generator, or an `AsyncIterable`, or `Ok` of one; an `Err`
 * refuses before the stream starts). The after hooks and the global after handler run once, on the
 * final value, when the stream ends.
 */
function* startStream(
  pipeline: Pipeline,
  compiled: CompiledAction,
  input: unknown,
  payload: unknown,
  context: ServerContext<any>,
  cancellation: Cancellation,
  trace: ExecutionTrace | undefined,
): Steps<Result<unknown, string>> {
  const started = yield* runAction(pipeline, compiled, input, context, cancellation)
  if (!started.ok) return started
  const returned = started.value
  if (!isAsyncIterable(returned)) {
    const failure = fail.notAResult(compiled.name)
    pipeline.diagnostics.error('engine.executeAction', messages.streamNotIterable(compiled.name))
    return failure
  }
  const inScope = captureScope()
  const onError = (error: unknown) => Err(pipeline.thrownMessage(error))
  const finish = (result: Result<unknown, string>) =>
    Promise.resolve(inScope(() => run(runEnd(pipeline, compiled, payload, result, context, trace), onError))).then((final) => {
      trace?.end(final)
      return final
    })
  return Ok(
    createActionStream({
      name: compiled.name,
      iterable: returned,
      cancellation,
      timeout: compiled.timeout,
      inScope,
      thrownMessage: pipeline.thrownMessage,
      finish,
    }),
  )
}

/**
 * One execution as the engine runs it: what its scope holds (lib/context.ts) and what its steps read,
 * in one object (no closure per execution).
 */
interface Run extends Execution {
  readonly pipeline: Pipeline
  readonly compiled: CompiledAction
  readonly context: ServerContext<any>
  readonly cancellation: Cancellation
  readonly trace: ExecutionTrace | undefined
}

/**
 * Whether an execution takes the plain path: nothing before the handler (no auth, no guard, no global
 * before handler, no before hook), nothing after it (no after hook, no global after handler), no
 * stream and no timeout. Decided per call: guards and the authenticator may be added after boot.
 */
function isPlain(pipeline: Pipeline, compiled: CompiledAction): boolean {
  return (
    !compiled.stream &&
    compiled.timeout === undefined &&
    compiled.before.length === 0 &&
    compiled.after.length === 0 &&
    pipeline.globalBefore === undefined &&
    pipeline.globalAfter === undefined &&
    !(compiled.action.isProtected && pipeline.authenticate) &&
    pipeline.guards.for(compiled.serviceName, compiled.action.name).length === 0
  )
}

/**
 * The plain path: `runPipeline` → `runAction` → `settleEnd` for an action with nothing around its
 * handler (`isPlain`), without their generators: the same answers, logs and hook context (made only
 * if the handler reads it). A throw outside the handler (a validator's) is `onError`'s, as in `run`.
 */
function runPlain(run: Run): Result<unknown, string> | Promise<Result<unknown, string>> {
  const { compiled } = run
  if (compiled.validate === undefined) return handlePlain(run, run.input)
  const checked = compiled.validate(run.input)
  if (isThenable(checked)) return Promise.resolve(checked).then((value) => validatedPlain(run, value), (error) => Err(run.pipeline.thrownMessage(error)))
  return validatedPlain(run, checked)
}

function validatedPlain(run: Run, checked: Awaited<ReturnType<NonNullable<CompiledAction['validate']>>>): Result<unknown, string> | Promise<Result<unknown, string>> {
  return checked.ok ? handlePlain(run, checked.value) : endPlain(run, fail.validation(checked.errors))
}

function handlePlain(run: Run, data: unknown): Result<unknown, string> | Promise<Result<unknown, string>> {
  let handled: unknown
  try {
    handled = run.compiled.action.handler(data, run.context)
  } catch (error) {
    return endPlain(run, Err(run.pipeline.thrownMessage(error)))
  }
  if (!isThenable(handled)) return endPlain(run, handled)
  return Promise.resolve(handled).then(
    (value) => endPlain(run, value),
    (error) => endPlain(run, Err(run.pipeline.thrownMessage(error))),
  )
}

/** `runAction`'s end (a non-Result, a declared error), then `settleEnd`'s, on the hook context only if it was made. */
function endPlain(run: Run, handled: unknown): Result<unknown, string> {
  const { pipeline, compiled } = run
  if (!isResult(handled)) return settled(run, notAResult(pipeline, compiled.name))
  const result = handled.ok ? (handled as Result<unknown, string>) : declaredOrPlain(pipeline, compiled, handled as Result<unknown, string>)
  return settled(run, result.ok ? result : declaredOrPlain(pipeline, compiled, result))
}

function settled(run: Run, result: Result<unknown, string>): Result<unknown, string> {
  const hook = run.hook
  if (hook !== undefined) {
    if (result.ok) hook.output = result.value
    else hook.error = result.error
  }
  return result
}

/** Each execution's `context.signal` follows the REST request's, when it runs in one. */
const requestSignal = () => getRequestStore()?.signal?.()

function lookup(registry: Registry, serviceName: string, actionName: string): CompiledAction | Failure {
  const service = registry.get(serviceName)
  if (!service) return fail.serviceNotFound(serviceName)
  return service.actions.get(actionName) ?? fail.actionNotFound(serviceName, actionName)
}

/** A streaming action's answer is known: a stream goes on (and ends its trace itself); a refusal is over. */
function ended(result: Result<unknown, string>, cancellation: Cancellation, trace: ExecutionTrace | undefined): Result<unknown, string> {
  if (result.ok && isActionStream(result.value)) return result
  return over(result, cancellation, trace)
}

/** An execution is over: its signal stops following the caller's, its trace ends. */
function over(result: Result<unknown, string>, cancellation: Cancellation, trace: ExecutionTrace | undefined): Result<unknown, string> {
  cancellation.dispose()
  trace?.end(result)
  return result
}

/** The engine: the services' lookup table, built once, and the one pipeline that runs an action. */
export function createEngine(options: EngineOptions): Engine {
  const registry = compileRegistry(options.services, options.actionTimeout)
  const pipeline: Pipeline = {
    diagnostics: options.diagnostics ?? createDiagnostics(false),
    globalBefore: options.onBeforeActionHandler,
    globalAfter: options.onAfterActionHandler,
    authenticate: options.authenticate,
    guards: new Guards(),
    thrownMessage: options.thrownMessage ?? errorMessage,
    instrument: options.instrument,
  }
  const serviceList = options.services.slice()
  // A throwing global handler or authenticator: the same rule as a throwing handler.
  const onError = (error: unknown) => Err(pipeline.thrownMessage(error))
  function execute(
    serviceName: string,
    actionName: string,
    payload: unknown,
    context: ServerContext<any>,
    options?: ExecuteOptions,
  ): Result<unknown, string> | Promise<Result<unknown, string>> {
    const compiled = lookup(registry, serviceName, actionName)
    if ('ok' in compiled) return compiled
    const signal = options?.signal
    const cancellation = new Cancellation(signal ? () => signal : requestSignal)
    const trace = pipeline.instrument?.({ service: serviceName, action: actionName, intent: 'execute' })
    const plain = isPlain(pipeline, compiled)
    // The pipeline's hooks share the hook context: made up front; the plain path makes it on first read.
    const execution: Run = { hook: plain ? undefined : createHookContext(compiled.name, payload), actionName: compiled.name, input: payload, cancellation, pipeline, compiled, context, trace }
    const steps = plain ? runPlainOnce : runPipelineOnce
    const request = options?.request
    const outcome = trace ? trace.run(() => runInExecutionScope(execution, steps, request)) : runInExecutionScope(execution, steps, request)
    if (!(outcome instanceof Promise)) return compiled.stream ? ended(outcome, cancellation, trace) : over(outcome, cancellation, trace)
    return outcome.then((result) => (compiled.stream ? ended(result, cancellation, trace) : over(result, cancellation, trace)))
  }
  // A throw anywhere in either path: the same rule as a throwing handler.
  function runPlainOnce(execution: Run): Result<unknown, string> | Promise<Result<unknown, string>> {
    try {
      return runPlain(execution)
    } catch (error) {
      return onError(error)
    }
  }
  function runPipelineOnce({ compiled, input, context, cancellation, trace }: Run): Result<unknown, string> | Promise<Result<unknown, string>> {
    return run(runPipeline(pipeline, compiled, input, context, cancellation, trace), onError)
  }
  return {
    getServices: () => Ok(serviceList),
    table: tableOf(registry),
    getServiceActions(serviceName) {
      const service = registry.get(serviceName)
      return service ? Ok(service.service.actions) : fail.serviceNotFound(serviceName)
    },
    getAction(serviceName, actionName) {
      const compiled = lookup(registry, serviceName, actionName)
      return 'ok' in compiled ? compiled : Ok(compiled.action)
    },
    execute,
    executeAction(serviceName, actionName, payload, context, options) {
      const outcome = execute(serviceName, actionName, payload, context, options)
      return outcome instanceof Promise ? outcome : Promise.resolve(outcome)
    },
    setAuthenticator(next) {
      pipeline.authenticate = next
    },
    addGuard(selector, guard) {
      pipeline.guards.add(selector, guard)
    },
  }
}
