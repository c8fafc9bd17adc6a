import { isStreamingAction, isVisibleToRest, type Action, type Service } from './action.js'
import { describeErrors } from './declared-errors.js'
import { deprecationNotice } from './deprecation.js'
import type { Engine } from './engine.js'
import { success, type ExternalResponse } from './envelope.js'
import { fail, type Failure } from './errors.js'
import { messages } from './messages.js'
import { outputJsonSchema } from './output.js'
import { toJsonSchema } from './validation.js'

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

/** Visible actions (not `visibility.rest: false`) by service, in declaration order. */
type Visible = Map<string, Map<string, Action>>

const actionKey = (service: string, action: string) => `${service}\u0000${action}`

function visibleActions(services: readonly Service[]): Visible {
  return new Map(services.map((service) => [service.name, new Map(service.actions.filter(isVisibleToRest).map((action) => [action.name, action]))]))
}

/** `deprecated: { since, ..., notice }` on a deprecated action; other actions keep the specification's exact shape. */
function deprecatedField(action: Action): { deprecated?: Record<string, string> } {
  return action.deprecated ? { deprecated: { ...action.deprecated, notice: deprecationNotice(action.deprecated) } } : {}
}

/** `stream: true` on a streaming action; other actions keep the specification's exact shape. */
function streamFlag(action: Action): { stream?: true } {
  return isStreamingAction(action) ? { stream: true } : {}
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
    const summaries = [...actions.values()].map((action) => ({
      name: action.name,
      description: action.description,
      isProtected: action.isProtected === true,
      validation: Boolean(action.validation),
      accessControl: action.accessControl ?? [],
      ...streamFlag(action),
      ...deprecatedField(action),
    }))
    byService.set(serviceName, success(messages.actionsListed(serviceName), { actions: summaries }))
    for (const action of actions.values()) {
      const detail = {
        name: action.name,
        description: action.description,
        isProtected: action.isProtected === true,
        accessControl: action.accessControl ?? null,
        hooks: { before: action.hooks?.before ?? [], after: action.hooks?.after ?? [] },
        meta: action.meta ?? null,
        ...streamFlag(action),
        ...deprecatedField(action),
        ...declaredErrors(serviceName, action),
      }
      byAction.set(actionKey(serviceName, action.name), success(messages.actionDescribed(serviceName, action.name), detail))
    }
  }
  return { all, byService, byAction }
}

/** `{ errors: { CODE: { status, message, data } } }` for an action that declares errors (`data`: its JSON Schema or null); `{}` otherwise. */
function declaredErrors(service: string, action: Action): { errors?: Record<string, unknown> } {
  const described = describeErrors(`${service}.${action.name}`, action.errors)
  if (!described) return {}
  return { errors: Object.fromEntries(described.map(({ code, status, message, data }) => [code, { status, message, data }])) }
}

/** The `schema` answers: one value per action (`valueOf`), keyed as the specification says. */
function schemaAnswers(visible: Visible, valueOf: (action: Action) => unknown): Answers {
  const schemasOf = (actions: Map<string, Action>) => Object.fromEntries([...actions.values()].map((action) => [action.name, valueOf(action)]))
  const all = success(messages.schemasExported, Object.fromEntries([...visible].map(([name, actions]) => [name, schemasOf(actions)])))
  const byService = new Map([...visible].map(([name, actions]) => [name, success(messages.serviceSchemasExported(name), schemasOf(actions))]))
  const byAction = new Map<string, ExternalResponse>()
  for (const [serviceName, actions] of visible) {
    for (const action of actions.values()) {
      const answer = success(messages.actionSchemaExported(serviceName, action.name), { [action.name]: valueOf(action) })
      byAction.set(actionKey(serviceName, action.name), answer)
    }
  }
  return { all, byService, byAction }
}

export function createDiscovery(engine: Engine): Discovery {
  const services = engine.getServices().value
  const visible = visibleActions(services)
  const missing = (service: string, action: string): Failure =>
    visible.has(service) ? fail.actionNotFound(service, action) : fail.serviceNotFound(service)
  const answer = (answers: Answers) => (service: string, action: string) => {
    if (service === '*') return answers.all
    if (action === '*') return answers.byService.get(service) ?? missing(service, action)
    return answers.byAction.get(actionKey(service, action)) ?? missing(service, action)
  }
  const serviceOf = new Map<Action, string>()
  for (const [name, actions] of visible) for (const action of actions.values()) serviceOf.set(action, name)
  const inputs = new Map<Action, Record<string, unknown> | null>()
  for (const actions of visible.values()) for (const action of actions.values()) inputs.set(action, toJsonSchema(action.validation))
  const inputOnly = answer(schemaAnswers(visible, (action) => inputs.get(action) ?? null))
  // With outputs, a streaming action's `output` is the schema of each event, and it says `stream: true`.
  const withOutputs = answer(
    schemaAnswers(visible, (action) => ({
      input: inputs.get(action) ?? null,
      output: outputJsonSchema(action),
      ...streamFlag(action),
      ...deprecatedField(action),
      ...declaredErrors(serviceOf.get(action)!, action),
    })),
  )
  return {
    explore: answer(exploreAnswers(services, visible)),
    schema: (service, action, withOutput = false) => (withOutput ? withOutputs : inputOnly)(service, action),
  }
}
