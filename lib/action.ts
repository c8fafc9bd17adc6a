import type { Action, Service } from './types.js'
import type { InferInput, ValidationSchema } from './validation.js'

/** An action as written: its `validation` schema decides the type of the handler's `data`. */
export type ActionDefinition<S extends ValidationSchema | null | undefined, TOutput> = Omit<
  Action<InferInput<S>, TOutput>,
  'validation'
> & { validation?: S }

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
