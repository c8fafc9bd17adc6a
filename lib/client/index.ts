/**
 * fastify-actions/client: a typed client for the services endpoint, in browsers and Node 20+.
 * No runtime dependency and no server code: every import from outside lib/client is `import type`.
 */
import type { Service } from '../action.js'
import { clientError, clientErrorCodes, clientMessages, type ClientError } from './errors.js'
import { toNamedBlob } from './files.js'
import { Err, Ok } from './result.js'
import type {
  CallOptions,
  Client,
  ClientOptions,
  ClientResult,
  DiscoveryOptions,
  FetchLike,
  ReservedNameCheck,
  UploadInput,
} from './types.js'

export { Ok, Err, isOk, isErr, type Result, type OkResult, type ErrResult } from './result.js'
export { clientErrorCodes, clientMessages, type ClientError, type ClientErrorCode } from './errors.js'
export type { FileInput } from './files.js'
export type * from './types.js'

type Envelope = { status: boolean; message: string; data: Record<string, unknown>; code?: unknown }

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

function isEnvelope(value: unknown): value is Envelope {
  return isObject(value) && typeof value.status === 'boolean' && typeof value.message === 'string' && isObject(value.data)
}

/** The envelope sends a non-object Ok value as `data: { result }`: hand back the value itself. */
function unwrap(data: Record<string, unknown>): unknown {
  const keys = Object.keys(data)
  return keys.length === 1 && keys[0] === 'result' && !isObject(data.result) ? data.result : data
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

// Names a Proxy must not answer: `await client` probes `then`, JSON.stringify `toJSON`, inspection symbols.
const probed = new Set<PropertyKey>(['then', 'toJSON'])
const STOPPED = Symbol('stopped')

/**
 * Creates a client. `createClient<typeof services>({ baseUrl })` types every call from the server's
 * services (built with `createAction` / `createService`); without the type argument, calls are untyped.
 */
export function createClient<T extends readonly Service[] = Service[]>(options: ClientOptions & ReservedNameCheck<T>): Client<T> {
  const endpoint = `${options.baseUrl.replace(/\/+$/, '')}/services`
  // Called through a wrapper: a browser's fetch refuses to run with another `this`.
  const fetcher: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init))

  /** The fetch call, a synchronous throw (a custom fetch) turned into a rejection like any other. */
  function request(init: RequestInit): Promise<Response> {
    try {
      return Promise.resolve(fetcher(endpoint, init))
    } catch (error) {
      return Promise.reject(error)
    }
  }

  async function headersFor(call: CallOptions | undefined, contentType: string | undefined): Promise<Headers | ClientError> {
    const headers = new Headers(options.headers)
    let token: string | undefined | null
    try {
      token = typeof options.token === 'function' ? await options.token() : options.token
    } catch (error) {
      return clientError(clientErrorCodes.badInput, clientMessages.tokenFailed(messageOf(error)), 0, error)
    }
    if (token) headers.set('authorization', `Bearer ${token}`)
    if (call?.headers) for (const [name, value] of new Headers(call.headers)) headers.set(name, value)
    // The body decides the content type: a per-call header never replaces it (FormData sets its own boundary).
    if (contentType) headers.set('content-type', contentType)
    else headers.delete('content-type')
    return headers
  }

  async function send(body: string | FormData, call: CallOptions | undefined, unwrapValue: boolean): Promise<ClientResult<unknown>> {
    const headers = await headersFor(call, typeof body === 'string' ? 'application/json' : undefined)
    if (!(headers instanceof Headers)) return Err(headers)
    const init: RequestInit = { method: 'POST', headers, body }
    if (options.credentials) init.credentials = options.credentials

    const signals = [options.signal, call?.signal].filter((signal): signal is AbortSignal => signal !== undefined)
    const timeout = call?.timeout ?? options.timeout ?? 0
    if (signals.some((signal) => signal.aborted)) return Err(clientError(clientErrorCodes.aborted, clientMessages.aborted, 0, signals.find((s) => s.aborted)?.reason))
    if (signals.length === 0 && !(timeout > 0)) return receive(request(init), undefined, unwrapValue)

    // Our own controller and race: a fetch that ignores its signal (`app.fetch` over inject) still stops.
    const controller = new AbortController()
    let stop: 'timeout' | 'aborted' | undefined
    let reason: unknown
    const halt = (why: 'timeout' | 'aborted', cause: unknown) => {
      if (stop) return
      stop = why
      reason = cause
      controller.abort(cause)
    }
    const onAbort = (event: Event) => halt('aborted', (event.target as AbortSignal).reason)
    for (const signal of signals) signal.addEventListener('abort', onAbort, { once: true })
    const timer = timeout > 0 ? setTimeout(() => halt('timeout', undefined), timeout) : undefined
    const stopped = new Promise<typeof STOPPED>((resolve) => controller.signal.addEventListener('abort', () => resolve(STOPPED), { once: true }))
    init.signal = controller.signal
    try {
      const result = await receive(request(init), stopped, unwrapValue)
      if (!stop) return result
      return Err(
        stop === 'timeout'
          ? clientError(clientErrorCodes.timeout, clientMessages.timeout(timeout))
          : clientError(clientErrorCodes.aborted, clientMessages.aborted, 0, reason),
      )
    } finally {
      clearTimeout(timer)
      for (const signal of signals) signal.removeEventListener('abort', onAbort)
    }
  }

  /** Reads the answer; `stopped` settles first when the call was aborted or timed out (the caller then reports which). */
  async function receive(pending: Promise<Response>, stopped: Promise<typeof STOPPED> | undefined, unwrapValue: boolean): Promise<ClientResult<unknown>> {
    const race = <V>(promise: Promise<V>) => {
      if (!stopped) return promise
      promise.catch(() => {}) // settles after the race was lost: nobody is listening any more
      return Promise.race([promise, stopped])
    }
    let response: Response | typeof STOPPED
    try {
      response = await race(pending)
    } catch (error) {
      return Err(clientError(clientErrorCodes.network, clientMessages.network(messageOf(error)), 0, error))
    }
    if (response === STOPPED) return Err(clientError(clientErrorCodes.aborted, clientMessages.aborted)) // replaced by the caller, who knows why
    let text: string | typeof STOPPED
    try {
      text = await race(response.text())
    } catch (error) {
      return Err(clientError(clientErrorCodes.network, clientMessages.unreadable(messageOf(error)), response.status, error))
    }
    if (text === STOPPED) return Err(clientError(clientErrorCodes.aborted, clientMessages.aborted)) // replaced by the caller, who knows why
    const httpStatus = response.status
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      return Err(clientError(clientErrorCodes.badResponse, clientMessages.notJson(httpStatus), httpStatus, text))
    }
    if (!isEnvelope(body)) {
      return Err(clientError(clientErrorCodes.badResponse, clientMessages.notEnvelope(httpStatus), httpStatus, body))
    }
    if (body.status && response.ok) return Ok(unwrapValue ? unwrap(body.data) : body.data)
    const error: ClientError = { status: false, message: body.message, data: body.data, httpStatus }
    if (typeof body.code === 'string') error.code = body.code
    return Err(error)
  }

  function execute(service: string, action: string, payload: unknown, call?: CallOptions): Promise<ClientResult<unknown>> {
    let body: string
    try {
      body = JSON.stringify({ intent: 'execute', service, action, payload: payload ?? {} })
    } catch (error) {
      // A BigInt or a cycle in the payload: an Err like every other failure, never a throw.
      return Promise.resolve(Err(clientError(clientErrorCodes.badInput, clientMessages.notSerializable(messageOf(error)), 0, error)))
    }
    return send(body, call, true)
  }

  function discover(intent: 'explore' | 'schema', service = '*', action = '*', call?: DiscoveryOptions) {
    const secret = call?.discoverySecret ?? options.discoverySecret
    const payload = secret === undefined ? {} : { discoverySecret: secret }
    return send(JSON.stringify({ intent, service, action, payload }), call, false)
  }

  async function upload(service: string, action: string, input: UploadInput, call?: CallOptions): Promise<ClientResult<unknown>> {
    const form = new FormData()
    form.append('intent', 'execute')
    form.append('service', service)
    form.append('action', action)
    for (const [name, value] of Object.entries(input?.fields ?? {})) {
      for (const item of Array.isArray(value) ? value : [value]) form.append(name, String(item))
    }
    for (const [name, value] of Object.entries(input?.files ?? {})) {
      for (const item of Array.isArray(value) ? value : [value]) {
        let file: Awaited<ReturnType<typeof toNamedBlob>>
        try {
          file = await toNamedBlob(item)
        } catch (error) {
          file = { error: messageOf(error) }
        }
        if ('error' in file) return Err(clientError(clientErrorCodes.badInput, file.error))
        form.append(name, file.blob, file.name)
      }
    }
    return send(form, call, true)
  }

  const methods: Record<string, unknown> = Object.assign(Object.create(null), {
    invoke: execute,
    explore: (service?: string, action?: string, call?: DiscoveryOptions) => discover('explore', service, action, call),
    schema: (service?: string, action?: string, call?: DiscoveryOptions) => discover('schema', service, action, call),
    upload,
  })

  const services = new Map<string, object>()
  function serviceProxy(service: string): object {
    const known = services.get(service)
    if (known) return known
    const actions = new Map<string, unknown>()
    const proxy = new Proxy(Object.create(null) as object, {
      get(_target, action) {
        if (typeof action === 'symbol' || probed.has(action)) return undefined
        let call = actions.get(action)
        if (!call) actions.set(action, (call = (payload?: unknown, options?: CallOptions) => execute(service, action, payload, options)))
        return call
      },
    })
    services.set(service, proxy)
    return proxy
  }

  // Client methods win over services of the same name (`createClient<typeof services>` refuses such names at compile time).
  return new Proxy(methods, {
    get(target, name) {
      if (typeof name === 'symbol' || probed.has(name)) return undefined
      return name in target ? target[name] : serviceProxy(name)
    },
  }) as Client<T>
}
