import type { Action, ActionHooks, ActionSpecial, Service } from './types.js'
import type { Result } from './result.js'
import type { InferInput, ValidationSchema } from './validation.js'
import type { ServerContext } from './context.js'

export interface ActionDefinition<S extends ValidationSchema | null | undefined, TOutput> {
  name: string
  description: string
  validation?: S
  handler: (
    data: InferInput<S>,
    context: ServerContext,
  ) => Result<TOutput, string> | Promise<Result<TOutput, string>>
  isProtected?: boolean
  accessControl?: string[]
  visibility?: { rest?: boolean; rpc?: boolean }
  hooks?: ActionHooks
  meta?: Record<string, unknown>
  isSpecial?: ActionSpecial
  timeout?: number
}

/** Defines an action; the handler's `data` is typed from `validation`. */
export function createAction<S extends ValidationSchema | null | undefined = undefined, TOutput = unknown>(
  definition: ActionDefinition<S, TOutput>,
): Action<InferInput<S>, TOutput> {
  return definition
}

/** Wraps a list of actions (optional; a plain array works the same). */
export function createActions(actions: Action[]): Action[] {
  return actions
}

/** Wraps a list of services (optional; a plain array works the same). */
export function createServices(services: Service[]): Service[] {
  return services
}
