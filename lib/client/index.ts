/**
 * fastify-actions/client: a typed client for the services endpoint, in browsers and Node 20+.
 * No runtime dependency and no server code: every import from outside lib/client is `import type`.
 */
import { clientError, clientErrorCodes, clientMessages, messageOf } from './errors.js'
import { clientProxy } from './proxy.js'
import { createSend } from './request.js'
import { Err } from './result.js'
import type { CallOptions, Client, ClientOptions, ClientResult, DiscoveryOptions, ReservedNameCheck, ServiceShape, UploadInput } from './types.js'
import { toUploadForm } from './upload-form.js'

export { Ok, Err, isOk, isErr, type Result, type OkResult, type ErrResult } from './result.js'
export { clientErrorCodes, clientMessages, isDeclaredError, StreamError, type ClientError, type ClientErrorCode, type DeclaredErrorIn } from './errors.js'
export type { FileInput } from './files.js'
export type * from './types.js'

/**
 * Creates a client. `createClient<typeof services>({ baseUrl })` types every call from the server's
 * services (built with `createAction` / `createService`); without the type argument, calls are untyped.
 */
export function createClient<T extends readonly ServiceShape[] = ServiceShape[]>(options: ClientOptions & ReservedNameCheck<T>): Client<T> {
  const send = createSend(options)

  function execute(service: string, action: string, payload: unknown, call?: CallOptions): Promise<ClientResult<unknown>> {
    let body: string
    try {
      body = JSON.stringify({ intent: 'execute', service, action, payload: payload ?? {} })
    } catch (error) {
      // A BigInt or a cycle in the payload: an Err like every other failure, never a throw.
      return Promise.resolve(Err(clientError(clientErrorCodes.badInput, clientMessages.notSerializable(messageOf(error)), 0, error)))
    }
    return send(body, call, true, true)
  }

  function discover(intent: 'explore' | 'schema', service = '*', action = '*', call?: DiscoveryOptions) {
    const secret = call?.discoverySecret ?? options.discoverySecret
    const payload = secret === undefined ? {} : { discoverySecret: secret }
    return send(JSON.stringify({ intent, service, action, payload }), call, false)
  }

  async function upload(service: string, action: string, input: UploadInput, call?: CallOptions): Promise<ClientResult<unknown>> {
    const form = await toUploadForm(service, action, input)
    return form instanceof FormData ? send(form, call, true) : Err(form)
  }

  const methods: Record<string, unknown> = Object.assign(Object.create(null), {
    invoke: execute,
    explore: (service?: string, action?: string, call?: DiscoveryOptions) => discover('explore', service, action, call),
    schema: (service?: string, action?: string, call?: DiscoveryOptions) => discover('schema', service, action, call),
    upload,
  })
  return clientProxy(methods, execute) as Client<T>
}
