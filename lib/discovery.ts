import type { Action } from './action.js'
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

const isVisible = (action: Action) => action.visibility?.rest !== false

export function createDiscovery(engine: Engine): Discovery {
  const services = engine.getServices()

  const visible = new Map<string, Map<string, Action>>()
  for (const service of services.value) {
    visible.set(service.name, new Map(service.actions.filter(isVisible).map((action) => [action.name, action])))
  }

  const exploreAll = success(messages.servicesListed, {
    services: services.value.map((service) => ({
      name: service.name,
      description: service.description,
      ...(service.meta ? { meta: service.meta } : {}),
      actions: [...visible.get(service.name)!.keys()],
    })),
  })
  const exploreService = new Map<string, ExternalResponse>()
  const exploreAction = new Map<string, ExternalResponse>()
  const schemaOf = new Map<Action, Record<string, unknown> | null>()
  for (const [serviceName, actions] of visible) {
    exploreService.set(
      serviceName,
      success(messages.actionsListed(serviceName), {
        actions: [...actions.values()].map((action) => ({
          name: action.name,
          description: action.description,
          isProtected: action.isProtected === true,
          validation: Boolean(action.validation),
          accessControl: action.accessControl ?? [],
        })),
      }),
    )
    for (const action of actions.values()) {
      exploreAction.set(
        `${serviceName}\u0000${action.name}`,
        success(messages.actionDescribed(serviceName, action.name), {
          name: action.name,
          description: action.description,
          isProtected: action.isProtected === true,
          accessControl: action.accessControl ?? null,
          hooks: { before: action.hooks?.before ?? [], after: action.hooks?.after ?? [] },
          meta: action.meta ?? null,
        }),
      )
      schemaOf.set(action, toJsonSchema(action.validation))
    }
  }
  const schemaTables = (valueOf: (action: Action) => unknown) => {
    const schemasOf = (actions: Map<string, Action>) => Object.fromEntries([...actions.values()].map((action) => [action.name, valueOf(action)]))
    const all = success(messages.schemasExported, Object.fromEntries([...visible].map(([name, actions]) => [name, schemasOf(actions)])))
    const byService = new Map([...visible].map(([name, actions]) => [name, success(messages.serviceSchemasExported(name), schemasOf(actions))]))
    const byAction = new Map<string, ExternalResponse>()
    for (const [serviceName, actions] of visible) {
      for (const action of actions.values()) {
        byAction.set(`${serviceName}\u0000${action.name}`, success(messages.actionSchemaExported(serviceName, action.name), { [action.name]: valueOf(action) }))
      }
    }
    return { all, byService, byAction }
  }
  const inputOnly = schemaTables((action) => schemaOf.get(action) ?? null)
  const withOutputs = schemaTables((action) => ({ input: schemaOf.get(action) ?? null, output: outputJsonSchema(action) }))

  const missing = (service: string, action: string): Failure =>
    visible.has(service) ? fail.actionNotFound(service, action) : fail.serviceNotFound(service)

  return {
    explore(service, action) {
      if (service === '*') return exploreAll
      if (action === '*') return exploreService.get(service) ?? missing(service, action)
      return exploreAction.get(`${service}\u0000${action}`) ?? missing(service, action)
    },
    schema(service, action, withOutput = false) {
      const tables = withOutput ? withOutputs : inputOnly
      if (service === '*') return tables.all
      if (action === '*') return tables.byService.get(service) ?? missing(service, action)
      return tables.byAction.get(`${service}\u0000${action}`) ?? missing(service, action)
    },
  }
}
