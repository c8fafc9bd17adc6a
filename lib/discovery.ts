import type { Action, Service } from './action.js'
import type { Engine } from './engine.js'
import { success, type ExternalResponse } from './envelope.js'
import { fail, type Failure } from './errors.js'
import { messages } from './messages.js'
import type { ActionTable, CompiledAction } from './registry.js'

/** Answers of the `explore` and `schema` intents, built once at boot: services never change after it. */
export interface Discovery {
  explore: (service: string, action: string) => ExternalResponse | Failure
  /**
   * `withOutput` (the request's `payload.output === true`): each action's value becomes
   * `{ input, output }`, its input and output JSON Schemas. Without it the answer is the
   * specification's: the input schema per action name.
   */
  schema: (service: string, action: string, withOutput?: boolean) => ExternalResponse | Failure
}

/** Every answer of one intent: for `*`, per service, per `service\0action`. */
interface Answers {
  all: ExternalResponse
  byService: Map<string, ExternalResponse>
  byAction: Map<string, ExternalResponse>
}

/** Visible actions (not `visibility.rest: false`) by service, in declaration order: their table entries. */
type Visible = Map<string, Map<string, CompiledAction>>

const actionKey = (service: string, action: string) => `${service}\u0000${action}`

function visibleActions(services: readonly Service[], table: ActionTable): Visible {
  const visible: Visible = new Map(services.map((service) => [service.name, new Map()]))
  for (const entry of table.entries) if (entry.visible) visible.get(entry.serviceName)!.set(entry.action.name, entry)
  return visible
}

/** `deprecated: { since, ..., notice }` on a deprecated action; other actions keep the specification's exact shape. */
function deprecatedField(entry: CompiledAction): { deprecated?: Record<string, string> } {
  return entry.deprecation ? { deprecated: { ...entry.action.deprecated, notice: entry.deprecation.notice } } : {}
}

/** `stream: true` on a streaming action; other actions keep the specification's exact shape. */
function streamFlag(entry: CompiledAction): { stream?: true } {
  return entry.stream ? { stream: true } : {}
}

/** `idempotency: 'required' | 'optional'` on an action that takes Idempotency-Keys (docs/idempotency.md); others keep their shape. */
function idempotencyField(action: Action): { idempotency?: Action['idempotency'] } {
  return action.idempotency ? { idempotency: action.idempotency } : {}
}

/** The specification's three `explore` shapes. */
function exploreAnswers(services: readonly Service[], visible: Visible): Answers {
  const all = success(messages.servicesListed, {
    services: services.map((service) => ({
      name: service.name,
      description: service.description,
      ...(service.meta ? { meta: service.meta } : {}),
      actions: [...visible.get(service.name)!.keys()],
    })),
  })
  const byService = new Map<string, ExternalResponse>()
  const byAction = new Map<string, ExternalResponse>()
  for (const [serviceName, actions] of visible) {
    const summaries = [...actions.values()].map((entry) => ({
      name: entry.action.name,
      description: entry.action.description,
      isProtected: entry.action.isProtected === true,
      validation: Boolean(entry.action.validation),
      accessControl: entry.action.accessControl ?? [],
      ...streamFlag(entry),
      ...deprecatedField(entry),
      ...idempotencyField(entry.action),
    }))
    byService.set(serviceName, success(messages.actionsListed(serviceName), { actions: summaries }))
    for (const entry of actions.values()) {
      const action = entry.action
      const detail = {
        name: action.name,
        description: action.description,
        isProtected: action.isProtected === true,
        accessControl: action.accessControl ?? null,
        hooks: { before: action.hooks?.before ?? [], after: action.hooks?.after ?? [] },
        meta: action.meta ?? null,
        ...streamFlag(entry),
        ...deprecatedField(entry),
        ...idempotencyField(action),
        ...declaredErrors(entry),
      }
      byAction.set(actionKey(serviceName, action.name), success(messages.actionDescribed(serviceName, action.name), detail))
    }
  }
  return { all, byService, byAction }
}

/** `{ errors: { CODE: { status, message, data } } }` for an action that declares errors (`data`: its JSON Schema or null); `{}` otherwise. */
function declaredErrors(entry: CompiledAction): { errors?: Record<string, unknown> } {
  if (!entry.errors) return {}
  return { errors: Object.fromEntries([...entry.errors.values()].map(({ code, status, message, data }) => [code, { status, message, data }])) }
}

/** The `schema` answers: one value per action (`valueOf`), keyed as the specification says. */
function schemaAnswers(visible: Visible, valueOf: (entry: CompiledAction) => unknown): Answers {
  const schemasOf = (actions: Map<string, CompiledAction>) => Object.fromEntries([...actions].map(([name, entry]) => [name, valueOf(entry)]))
  const all = success(messages.schemasExported, Object.fromEntries([...visible].map(([name, actions]) => [name, schemasOf(actions)])))
  const byService = new Map([...visible].map(([name, actions]) => [name, success(messages.serviceSchemasExported(name), schemasOf(actions))]))
  const byAction = new Map<string, ExternalResponse>()
  for (const [serviceName, actions] of visible) {
    for (const [name, entry] of actions) {
      const answer = success(messages.actionSchemaExported(serviceName, name), { [name]: valueOf(entry) })
      byAction.set(actionKey(serviceName, name), answer)
    }
  }
  return { all, byService, byAction }
}

export function createDiscovery(engine: Engine): Discovery {
  const services = engine.getServices().value
  const visible = visibleActions(services, engine.table)
  const missing = (service: string, action: string): Failure =>
    visible.has(service) ? fail.actionNotFound(service, action) : fail.serviceNotFound(service)
  const answer = (answers: Answers) => (service: string, action: string) => {
    if (service === '*') return answers.all
    if (action === '*') return answers.byService.get(service) ?? missing(service, action)
    return answers.byAction.get(actionKey(service, action)) ?? missing(service, action)
  }
  const inputOnly = answer(schemaAnswers(visible, (entry) => entry.input))
  // With outputs, a streaming action's `output` is the schema of each event, and it says `stream: true`.
  const withOutputs = answer(
    schemaAnswers(visible, (entry) => ({
      input: entry.input,
      output: entry.output,
      ...streamFlag(entry),
      ...deprecatedField(entry),
      ...idempotencyField(entry.action),
      ...declaredErrors(entry),
    })),
  )
  return {
    explore: answer(exploreAnswers(services, visible)),
    schema: (service, action, withOutput = false) => (withOutput ? withOutputs : inputOnly)(service, action),
  }
}
