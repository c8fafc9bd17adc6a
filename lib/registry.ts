import { isStreamingAction, type Action, type HookRef, type Service } from './action.js'
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

/** Builds the lookup table once, rejecting duplicate names and hooks that name no action. */
export function compileRegistry(services: readonly Service[], actionTimeout?: number): Registry {
  const registry = new Map<string, CompiledService>()
  for (const service of services) {
    if (registry.has(service.name)) throw new ErrDuplicateService(service.name)
    const actions = new Map<string, CompiledAction>()
    for (const action of service.actions) {
      if (actions.has(action.name)) throw new ErrDuplicateAction(action.name, service.name)
      actions.set(action.name, {
        serviceName: service.name,
        action,
        name: `${service.name}.${action.name}`,
        validate: action.validation ? compileValidator(action.validation) : undefined,
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
