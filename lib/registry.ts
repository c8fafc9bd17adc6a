import { isStreamingAction, type Action, type HookRef, type Service } from './action.js'
import { compileErrors, type CompiledErrors } from './declared-errors.js'
import { checkDeprecation } from './deprecation.js'
import { ErrConfig, ErrDuplicateAction, ErrDuplicateService, ErrUnknownHook } from './errors.js'
import { messages } from './messages.js'
import { compileValidator, type Validator } from './validation.js'

export interface CompiledHook {
  ref: HookRef
  name: string
  target: CompiledAction
}

/** One action as the engine runs it: its validator compiled and its hooks resolved, once. */
export interface CompiledAction {
  serviceName: string
  action: Action
  /** `service.action` */
  name: string
  validate?: Validator
  /** Its declared errors, checked and compiled; undefined when it declares none. */
  errors?: CompiledErrors
  timeout?: number
  /** A streaming action (lib/stream.ts): its handler gives events. */
  stream: boolean
  before: CompiledHook[]
  after: CompiledHook[]
}

export interface CompiledService {
  service: Service
  actions: Map<string, CompiledAction>
}

export type Registry = ReadonlyMap<string, CompiledService>

/**
 * What a service or action name may be: it is spliced into a route (`{baseUrl}/services/{service}/{action}`),
 * where `*` or `:x` would be a router pattern, and into an MCP tool name, which allows these characters only.
 */
export const NAME_RULE = /^[A-Za-z0-9_-]{1,64}$/

/** Builds the lookup table once, rejecting names outside NAME_RULE, duplicate names and hooks that name no action. */
export function compileRegistry(services: readonly Service[], actionTimeout?: number): Registry {
  const registry = new Map<string, CompiledService>()
  for (const service of services) {
    if (typeof service.name !== 'string' || !NAME_RULE.test(service.name)) throw new ErrConfig(messages.invalidServiceName(service.name))
    if (registry.has(service.name)) throw new ErrDuplicateService(service.name)
    const actions = new Map<string, CompiledAction>()
    for (const action of service.actions) {
      if (typeof action.name !== 'string' || !NAME_RULE.test(action.name)) throw new ErrConfig(messages.invalidActionName(action.name, service.name))
      if (actions.has(action.name)) throw new ErrDuplicateAction(action.name, service.name)
      const name = `${service.name}.${action.name}`
      checkDeprecation(name, action.deprecated)
      actions.set(action.name, {
        serviceName: service.name,
        action,
        name,
        validate: action.validation ? compileValidator(action.validation) : undefined,
        errors: compileErrors(name, action.errors),
        timeout: action.timeout ?? actionTimeout,
        stream: isStreamingAction(action),
        before: [],
        after: [],
      })
    }
    registry.set(service.name, { service, actions })
  }
  const resolve = (owner: CompiledAction, ref: HookRef): CompiledHook => {
    const target = registry.get(ref.service)?.actions.get(ref.action)
    if (!target) throw new ErrUnknownHook(`${ref.service}.${ref.action}`, owner.name)
    // A hook answers once; a streaming action cannot be one.
    if (target.stream) throw new ErrConfig(messages.streamAsHook(target.name, owner.name))
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
