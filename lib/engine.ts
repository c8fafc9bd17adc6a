import { DrizzleQueryError } from 'drizzle-orm/errors'
import { Err, Ok, isResult, type ErrResult, type Result } from './result.js'
import { messages } from './messages.js'
import { compileValidator, type Validator } from './validation.js'
import { createHookContext, runInExecutionScope, type ServerContext } from './context.js'
import { createDiagnostics, errorMessage, type Diagnostics } from './diagnostics.js'
import type { Action, AfterActionHandler, AuthResult, BeforeActionHandler, HookRef, Service } from './types.js'

/**
 * An `Err` that also says which HTTP status and `data` it answers with.
 * Plain `Err(text)` from user code answers 400 with `data: {}`.
 */
export interface Failure extends ErrResult<string> {
  readonly status: number
  readonly data: Record<string, unknown>
}

// Only failures made here carry an HTTP status: a user's Err-shaped object never picks its own.
const failures = new WeakSet<object>()

export function fail(status: number, message: string, data: Record<string, unknown> = {}): Failure {
  const failure: Failure = { ok: false, error: message, status, data }
  failures.add(failure)
  return failure
}

export function isFailure(value: unknown): value is Failure {
  return typeof value === 'object' && value !== null && failures.has(value)
}

/** Verifies the caller of a protected action; fills the request's auth result or answers a Failure. */
export type Authenticator = (context: ServerContext<any>) => Promise<Result<AuthResult, string>> | Result<AuthResult, string>

export interface EngineOptions {
  services: Service[]
  diagnostics?: Diagnostics
  onBeforeActionHandler?: BeforeActionHandler
  onAfterActionHandler?: AfterActionHandler
  authenticate?: Authenticator
  /** Default handler timeout in ms. */
  actionTimeout?: number
}

export interface Engine {
  getServices: () => Result<Service[], string>
  getServiceActions: (service: string) => Result<Action[], string>
  getAction: (service: string, action: string) => Result<Action, string>
  executeAction: (service: string, action: string, payload: unknown, context: ServerContext<any>) => Promise<Result<unknown, string>>
  /** Sets the authenticator (the auth plugin does this at boot). */
  setAuthenticator: (authenticate: Authenticator | undefined) => void
}

interface CompiledHook {
  ref: HookRef
  name: string
  target: CompiledAction
}

interface CompiledAction {
  serviceName: string
  action: Action
  name: string
  validate?: Validator
  timeout?: number
  before: CompiledHook[]
  after: CompiledHook[]
}

interface CompiledService {
  service: Service
  actions: Map<string, CompiledAction>
}

/** Builds the registry once, rejecting duplicates and dangling hook references. */
function compileRegistry(services: Service[], actionTimeout?: number): Map<string, CompiledService> {
  const registry = new Map<string, CompiledService>()
  for (const service of services) {
    if (registry.has(service.name)) throw new Error(`Duplicate service name '${service.name}'`)
    const actions = new Map<string, CompiledAction>()
    for (const action of service.actions) {
      if (actions.has(action.name)) {
        throw new Error(`Duplicate action name '${action.name}' in service '${service.name}'`)
      }
      actions.set(action.name, {
        serviceName: service.name,
        action,
        name: `${service.name}.${action.name}`,
        validate: action.validation ? compileValidator(action.validation) : undefined,
        timeout: action.timeout ?? actionTimeout,
        before: [],
        after: [],
      })
    }
    registry.set(service.name, { service, actions })
  }
  const resolve = (owner: CompiledAction, ref: HookRef): CompiledHook => {
    const target = registry.get(ref.service)?.actions.get(ref.action)
    if (!target) throw new Error(`Hook '${ref.service}.${ref.action}' of action '${owner.name}' does not exist`)
    return { ref, name: target.name, target }
  }
  for (const { actions } of registry.values()) {
    for (const compiled of actions.values()) {
      compiled.before = (compiled.action.hooks?.before ?? []).map((ref) => resolve(compiled, ref))
      compiled.after = (compiled.action.hooks?.after ?? []).map((ref) => resolve(compiled, ref))
    }
  }
  return registry
}

export function createEngine(options: EngineOptions): Engine {
  const registry = compileRegistry(options.services, options.actionTimeout)
  const diagnostics = options.diagnostics ?? createDiagnostics(false)
  const { onBeforeActionHandler: globalBefore, onAfterActionHandler: globalAfter } = options
  let authenticate = options.authenticate
  const serviceList = options.services.slice()

  /** A programming error: logged for the developer, a 500 for the client. */
  function notAResult(what: string): Failure {
    diagnostics.error('engine.executeAction', messages.notAResult(what))
    return fail(500, messages.internal)
  }

  function lookup(serviceName: string, actionName: string): CompiledAction | Failure {
    const service = registry.get(serviceName)
    if (!service) return fail(400, messages.serviceNotFound(serviceName))
    const action = service.actions.get(actionName)
    if (!action) return fail(400, messages.actionNotFound(serviceName, actionName))
    return action
  }

  /** Validation plus handler, with exceptions, non-Results and timeouts turned into Failures. */
  function* runAction(compiled: CompiledAction, input: unknown, context: ServerContext<any>): Steps<Result<unknown, string>> {
    let data = input
    if (compiled.validate) {
      const checked = yield* settle(compiled.validate(input))
      if (!checked.ok) return fail(400, messages.validationFailed, { errors: checked.errors })
      data = checked.value
    }
    try {
      const pending = compiled.action.handler(data, context)
      const result = yield* settle(compiled.timeout ? withTimeout(pending, compiled) : pending)
      if (!isResult(result)) return notAResult(compiled.name)
      return result as Result<unknown, string>
    } catch (error) {
      if (error instanceof ActionTimeout) return fail(504, error.message)
      return Err(clientMessage(error))
    }
  }

  function* runHooks(
    hooks: CompiledHook[],
    phase: 'before' | 'after',
    input: unknown,
    context: ServerContext<any>,
  ): Steps<Result<unknown, string>> {
    let current = input
    for (const hook of hooks) {
      const result = yield* runAction(hook.target, current, context)
      context.addHookLog(phase, {
        name: hook.name,
        input: current,
        output: result.ok ? result.value : result.error,
        passed: result.ok,
      })
      if (result.ok) {
        current = result.value
        continue
      }
      if (hook.ref.isCritical) {
        context.setHookError(result.error)
        return fail(400, messages.hookFailed(hook.name, result.error))
      }
      diagnostics.warn('engine.runHooks', `Non-critical ${phase} hook '${hook.name}' failed: ${result.error}`)
    }
    return Ok(current)
  }

  function* runPipeline(compiled: CompiledAction, payload: unknown, context: ServerContext<any>): Steps<Result<unknown, string>> {
    const { action } = compiled
    if (action.isProtected && authenticate) {
      const auth = yield* settle(authenticate(context))
      if (!auth.ok) return auth
    }
    if (globalBefore) {
      const gate = yield* settle(globalBefore({ nileContext: context, action, payload }))
      if (!isResult(gate)) return notAResult('onBeforeActionHandler')
      if (!gate.ok) return gate
    }
    let input = payload
    if (compiled.before.length > 0) {
      const before = yield* runHooks(compiled.before, 'before', input, context)
      if (!before.ok) return before
      input = before.value
    }
    let result = yield* runAction(compiled, input, context)
    if (result.ok && compiled.after.length > 0) result = yield* runHooks(compiled.after, 'after', result.value, context)
    if (globalAfter) {
      result = yield* settle(globalAfter({ nileContext: context, action, payload, result }))
      if (!isResult(result)) return notAResult('onAfterActionHandler')
    }
    if (result.ok) context.setHookOutput(result.value)
    else context.setHookError(result.error)
    return result
  }

  function executeAction(
    serviceName: string,
    actionName: string,
    payload: unknown,
    context: ServerContext<any>,
  ): Promise<Result<unknown, string>> {
    const compiled = lookup(serviceName, actionName)
    if ('ok' in compiled) return Promise.resolve(compiled)
    const hookContext = createHookContext(compiled.name, payload)
    // A throwing global handler or authenticator: the same rule as a throwing handler.
    return runInExecutionScope(hookContext, () => run(runPipeline(compiled, payload, context), (error) => Err(clientMessage(error))))
  }

  return {
    getServices: () => Ok(serviceList),
    getServiceActions(serviceName) {
      const service = registry.get(serviceName)
      return service ? Ok(service.service.actions) : fail(400, messages.serviceNotFound(serviceName))
    },
    getAction(serviceName, actionName) {
      const compiled = lookup(serviceName, actionName)
      return 'ok' in compiled ? compiled : Ok(compiled.action)
    },
    executeAction,
    setAuthenticator(next) {
      authenticate = next
    },
  }
}

/**
 * The text a thrown exception answers with. Drizzle wraps every query error as
 * `Failed query: <SQL> params: <values>`: the client gets the driver's own message, never the SQL.
 */
function clientMessage(error: unknown): string {
  if (error instanceof DrizzleQueryError && error.cause instanceof Error) return error.cause.message
  return errorMessage(error)
}

/**
 * The pipeline's steps are generators that `yield` what they wait for. `run` goes on at once when
 * the value is already there and awaits only a real promise: synchronous validators, handlers and
 * hooks cost no promise and no microtask (on Node 20 each promise also runs AsyncLocalStorage's hook).
 */
type Steps<T> = Generator<unknown, T, unknown>

/** `const value = yield* settle(valueOrPromise)`: the step's `await`. */
function* settle<T>(value: T | PromiseLike<T>): Steps<T> {
  // `run` sends back what was yielded, awaited first when it was a promise: a T either way.
  return (yield value) as T
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function'
}

/** Runs steps to their end; a throw or rejection anywhere becomes `onError(error)`. */
function run<T>(steps: Steps<T>, onError: (error: unknown) => T): Promise<T> {
  try {
    const step = proceed(steps, steps.next())
    return step.done ? Promise.resolve(step.value) : resume(steps, step.value).catch(onError)
  } catch (error) {
    return Promise.resolve(onError(error))
  }
}

/** Feeds plain values straight back; stops at the end or at the first promise. */
function proceed<T>(steps: Steps<T>, step: IteratorResult<unknown, T>): { done: true; value: T } | { done: false; value: PromiseLike<unknown> } {
  while (!step.done) {
    if (isThenable(step.value)) return { done: false, value: step.value }
    step = steps.next(step.value)
  }
  return step
}

async function resume<T>(steps: Steps<T>, pending: PromiseLike<unknown>): Promise<T> {
  for (;;) {
    let value: unknown
    let failed = false
    try {
      value = await pending
    } catch (error) {
      failed = true
      value = error
    }
    const step = proceed(steps, failed ? steps.throw(value) : steps.next(value))
    if (step.done) return step.value
    pending = step.value
  }
}

function withTimeout<T>(pending: T | Promise<T>, compiled: CompiledAction): T | Promise<T> {
  if (!(pending instanceof Promise)) return pending
  const ms = compiled.timeout as number
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ActionTimeout(compiled.name, ms)), ms)
  })
  return Promise.race([pending, timeout]).finally(() => clearTimeout(timer))
}

class ActionTimeout extends Error {
  constructor(name: string, ms: number) {
    super(messages.actionTimedOut(name, ms))
  }
}
