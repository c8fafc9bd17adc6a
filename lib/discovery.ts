import type { Action } from './action.js'
import type { Engine } from './engine.js'
import { success, type ExternalResponse } from './envelope.js'
import { fail, type Failure } from './errors.js'
import { messages } from './messages.js'
import { toJsonSchema } from './validation.js'

/** Answers of the `explore` and `schema` intents, built once at boot: services never change after it. */
export interface Discovery {
  explore: (service: string, action: string) => ExternalResponse | Failure
  schema: (service: string, action: string) => ExternalResponse | Failure
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
  const schemasOf = (actions: Map<string, Action>) =>
    Object.fromEntries([...actions.values()].map((action) => [action.name, schemaOf.get(action) ?? null]))
  const schemaAll = success(messages.schemasExported, Object.fromEntries([...visible].map(([name, actions]) => [name, schemasOf(actions)])))
  const schemaService = new Map([...visible].map(([name, actions]) => [name, success(messages.serviceSchemasExported(name), schemasOf(actions))]))
  const schemaAction = new Map<string, ExternalResponse>()
  for (const [serviceName, actions] of visible) {
    for (const action of actions.values()) {
      const answer = success(messages.actionSchemaExported(serviceName, action.name), { [action.name]: schemaOf.get(action) ?? null })
      schemaAction.set(`${serviceName}\u0000${action.name}`, answer)
    }
  }

  const missing = (service: string, action: string): Failure =>
    visible.has(service) ? fail.actionNotFound(service, action) : fail.serviceNotFound(service)

  return {
    explore(service, action) {
      if (service === '*') return exploreAll
      if (action === '*') return exploreService.get(service) ?? missing(service, action)
      return exploreAction.get(`${service}\u0000${action}`) ?? missing(service, action)
    },
    schema(service, action) {
      if (service === '*') return schemaAll
      if (action === '*') return schemaService.get(service) ?? missing(service, action)
      return schemaAction.get(`${service}\u0000${action}`) ?? missing(service, action)
    },
  }
}
