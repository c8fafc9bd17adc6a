import type { Action } from './action.js'
import type { ServerContext } from './context.js'
import { ErrConfig } from './errors.js'
import { messages } from './messages.js'
import type { Result } from './result.js'

/**
 * Guards keyed by action identity: one check for every way in (the endpoint, the per-action route,
 * MCP over HTTP and stdio), run by the engine's pipeline after auth and before the global before
 * handler, the hooks and validation. Path middleware sees only the per-action route; a guard sees
 * every call of the actions it selects.
 */

/** Which actions a guard covers: a service name, an action name, or both; omitted or `'*'` is any. */
export interface GuardSelector {
  service?: string
  action?: string
}

/** What a guard learns of one call. */
export interface GuardCall<TDB = unknown> {
  service: string
  action: Action
  /** The payload as sent: validation has not run yet. */
  payload: unknown
  nileContext: ServerContext<TDB>
}

/** `Ok` lets the call through; `Err(text)` refuses it with 403 and that text. A throw refuses it too. */
export type Guard<TDB = unknown> = (call: GuardCall<TDB>) => Result<unknown, string> | Promise<Result<unknown, string>>

interface Entry {
  service: string
  action: string
  guard: Guard<any>
}

function selectorPart(value: unknown): string | undefined {
  if (value === undefined || value === '*') return '*'
  return typeof value === 'string' && value !== '' ? value : undefined
}

const NO_GUARDS: readonly Guard<any>[] = Object.freeze([])

/** The guards of one engine, and for each action the ones that select it (worked out once per action). */
export class Guards {
  readonly #entries: Entry[] = []
  #byAction = new Map<string, readonly Guard<any>[]>()

  add(selector: GuardSelector, guard: Guard<any>): void {
    const service = selectorPart(selector?.service)
    const action = selectorPart(selector?.action)
    const known = typeof selector === 'object' && selector !== null && Object.keys(selector).every((key) => key === 'service' || key === 'action')
    if (!known || service === undefined || action === undefined || typeof guard !== 'function') {
      throw new ErrConfig(messages.guardBadSelector(JSON.stringify(selector) ?? String(selector)))
    }
    this.#entries.push({ service, action, guard })
    this.#byAction = new Map()
  }

  /** The guards of `service.action`, in the order they were added. */
  for(service: string, action: string): readonly Guard<any>[] {
    if (this.#entries.length === 0) return NO_GUARDS
    const key = `${service}.${action}`
    let guards = this.#byAction.get(key)
    if (guards === undefined) {
      guards = this.#entries.filter((entry) => (entry.service === '*' || entry.service === service) && (entry.action === '*' || entry.action === action)).map((entry) => entry.guard)
      this.#byAction.set(key, guards)
    }
    return guards
  }
}
