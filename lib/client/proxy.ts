import type { CallOptions, ClientResult } from './types.js'

type Execute = (service: string, action: string, payload: unknown, call?: CallOptions) => Promise<ClientResult<unknown>>

// Names a Proxy must not answer: `await client` probes `then`, JSON.stringify `toJSON`, inspection symbols.
const probed = new Set<PropertyKey>(['then', 'toJSON'])

/**
 * `client.<service>.<action>(payload)` over the client's own methods. Client methods win over services
 * of the same name (`createClient<typeof services>` refuses such names at compile time).
 */
export function clientProxy(methods: Record<string, unknown>, execute: Execute): object {
  const services = new Map<string, object>()
  const serviceProxy = (service: string): object => {
    let proxy = services.get(service)
    if (!proxy) services.set(service, (proxy = actionsProxy(service, execute)))
    return proxy
  }
  return new Proxy(methods, {
    get(target, name) {
      if (typeof name === 'symbol' || probed.has(name)) return undefined
      return name in target ? target[name] : serviceProxy(name)
    },
  })
}

/** One service's actions, each a function made once and kept (`client.a.b === client.a.b`). */
function actionsProxy(service: string, execute: Execute): object {
  const actions = new Map<string, unknown>()
  return new Proxy(Object.create(null) as object, {
    get(_target, action) {
      if (typeof action === 'symbol' || probed.has(action)) return undefined
      let call = actions.get(action)
      if (!call) actions.set(action, (call = (payload?: unknown, options?: CallOptions) => execute(service, action, payload, options)))
      return call
    },
  })
}
