/**
 * fastify-actions/client: a typed client for the services endpoint, in browsers and Node 20+.
 * No runtime dependency and no server code: every import from outside lib/client is `import type`.
 */
import { clientError, clientErrorCodes, clientMessages, messageOf } from './errors.js'
import { clientProxy } from './proxy.js'
import { createSend, type Send } from './request.js'
import { Err } from './result.js'
import type { CallOptions, Client, ClientOptions, ClientResult, DiscoveryOptions, ReservedNameCheck, ServiceShape, UploadInput } from './types.js'
import { toUploadForm } from './upload-form.js'

export { Ok, Err, isOk, isErr, type Result, type OkResult, type ErrResult } from './result.js'
export { clientErrorCodes, clientMessages, isDeclaredError, StreamError, type ClientError, type ClientErrorCode, type DeclaredErrorIn, type StreamErrorOf } from './errors.js'
export type { FileInput } from './files.js'
export type * from './types.js'

/**
 * Creates a client. `createClient<typeof services>({ baseUrl })` types every call from the server's
 * services (built with `createAction` / `createService`); without the type argument, calls are untyped.
 */
export function createClient<T extends readonly ServiceShape[] = ServiceShape[]>(options: ClientOptions & ReservedNameCheck<T>): Client<T> {
  const send = createSend(options)
  const idempotent = new Set(options.idempotent ?? [])
  const retry = retryOf(options.retry)

  function execute(service: string, action: string, payload: unknown, call?: CallOptions): Promise<ClientResult<unknown>> {
    let body: string
    try {
      body = JSON.stringify({ intent: 'execute', service, action, payload: payload ?? {} })
    } catch (error) {
      // A BigInt or a cycle in the payload: an Err like every other failure, never a throw.
      return Promise.resolve(Err(clientError(clientErrorCodes.badInput, clientMessages.notSerializable(messageOf(error)), 0, error)))
    }
    const key = call?.idempotencyKey ?? (idempotent.has(`${service}.${action}`) ? globalThis.crypto.randomUUID() : undefined)
    return key === undefined ? send(body, call, true, true) : sendWithKey(send, body, call, key, retry)
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

type Retry = { attempts: number; delay: number }

const DEFAULT_RETRY: Retry = { attempts: 2, delay: 250 }

function retryOf(option: ClientOptions['retry']): Retry {
  if (option === false) return { attempts: 0, delay: 0 }
  const count = (value: number | undefined, fallback: number) => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : fallback)
  return { attempts: count(option?.attempts, DEFAULT_RETRY.attempts), delay: count(option?.delay, DEFAULT_RETRY.delay) }
}

/** An answer that never arrived: the request may have run, so only a keyed call sends it again. After a first loss, a 409 (the first still running) too. */
function answerLost(result: ClientResult<unknown>, retried: boolean): boolean {
  if (result.ok) return false
  const { code, httpStatus } = result.error
  return code === clientErrorCodes.network || httpStatus === 502 || httpStatus === 503 || httpStatus === 504 || (retried && httpStatus === 409)
}

/** A call with an `Idempotency-Key`: sent, then sent again with the same key while its answer is lost, at most `retry.attempts` more times. */
async function sendWithKey(send: Send, body: string, call: CallOptions | undefined, key: string, retry: Retry): Promise<ClientResult<unknown>> {
  const headers = new Headers(call?.headers)
  headers.set('idempotency-key', key)
  const keyed: CallOptions = { ...call, headers }
  let result = await send(body, keyed, true, true)
  for (let attempt = 1; attempt <= retry.attempts && answerLost(result, attempt > 1); attempt++) {
    if (call?.signal?.aborted) break
    await new Promise((resolve) => setTimeout(resolve, retry.delay * attempt))
    result = await send(body, keyed, true, true)
  }
  return result
}
