import { clientError, clientErrorCodes, clientMessages, messageOf, type ClientError } from './errors.js'
import { receive, STOPPED } from './response.js'
import { Err } from './result.js'
import type { CallOptions, ClientOptions, ClientResult, FetchLike } from './types.js'

/** Posts a JSON string or a FormData to the services endpoint and reads the answer into a Result. */
export type Send = (body: string | FormData, call: CallOptions | undefined, unwrapValue: boolean) => Promise<ClientResult<unknown>>

/** The `send` of one client: its endpoint and fetch are fixed here, its token and headers read at each call. */
export function createSend(options: ClientOptions): Send {
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

  return async function send(body, call, unwrapValue) {
    const headers = await headersFor(options, call, typeof body === 'string' ? 'application/json' : undefined)
    if (!(headers instanceof Headers)) return Err(headers)
    const init: RequestInit = { method: 'POST', headers, body }
    if (options.credentials) init.credentials = options.credentials

    const signals = [options.signal, call?.signal].filter((signal): signal is AbortSignal => signal !== undefined)
    const timeout = call?.timeout ?? options.timeout ?? 0
    if (signals.some((signal) => signal.aborted)) return Err(clientError(clientErrorCodes.aborted, clientMessages.aborted, 0, signals.find((s) => s.aborted)?.reason))
    if (signals.length === 0 && !(timeout > 0)) return receive(request(init), undefined, unwrapValue)
    const start = (signal: AbortSignal) => {
      init.signal = signal
      return request(init)
    }
    return receiveUntilStopped(start, signals, timeout, unwrapValue)
  }
}

async function headersFor(options: ClientOptions, call: CallOptions | undefined, contentType: string | undefined): Promise<Headers | ClientError> {
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

/**
 * A call the caller's signals or a timeout may stop. Our own controller and race: a fetch that ignores
 * its signal (`app.fetch` over inject) still stops.
 */
async function receiveUntilStopped(start: (signal: AbortSignal) => Promise<Response>, signals: AbortSignal[], timeout: number, unwrapValue: boolean): Promise<ClientResult<unknown>> {
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
  try {
    const result = await receive(start(controller.signal), stopped, unwrapValue)
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
