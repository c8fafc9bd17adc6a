import { clientError, clientErrorCodes, clientMessages, messageOf, type ClientError } from './errors.js'
import { receive, STOPPED, type StreamOpener } from './response.js'
import { Err } from './result.js'
import type { CallOptions, ClientOptions, ClientResult, EventStream, FetchLike } from './types.js'

/**
 * Posts a JSON string or a FormData to the services endpoint and reads the answer into a Result.
 * With `acceptStream` (execute calls) the request accepts `text/event-stream` too: a streaming
 * action answers with its events, any other action with JSON as before.
 */
export type Send = (body: string | FormData, call: CallOptions | undefined, unwrapValue: boolean, acceptStream?: boolean) => Promise<ClientResult<unknown>>

/** What an execute call accepts: the envelope, or a streaming action's events. */
export const ACCEPT_STREAM = 'application/json, text/event-stream'

/** The `send` of one client: its endpoint and fetch are fixed here, its token and headers read at each call. */
export function createSend(options: ClientOptions): Send {
  const endpoint = `${options.baseUrl.replace(/\/+$/, '')}/services`
  // Called through a wrapper: a browser's fetch refuses to run with another `this`.
  const fetcher: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const attempts = resumeAttempts(options.resume)

  /** The fetch call, a synchronous throw (a custom fetch) turned into a rejection like any other. */
  function request(init: RequestInit): Promise<Response> {
    try {
      return Promise.resolve(fetcher(endpoint, init))
    } catch (error) {
      return Promise.reject(error)
    }
  }

  return async function send(body, call, unwrapValue, acceptStream = false) {
    const headers = await headersFor(options, call, typeof body === 'string' ? 'application/json' : undefined)
    if (!(headers instanceof Headers)) return Err(headers)
    if (acceptStream && !headers.has('accept')) headers.set('accept', ACCEPT_STREAM)
    const init: RequestInit = { method: 'POST', headers, body }
    if (options.credentials) init.credentials = options.credentials

    const signals = [options.signal, call?.signal].filter((signal): signal is AbortSignal => signal !== undefined)
    const timeout = call?.timeout ?? options.timeout ?? 0
    if (signals.some((signal) => signal.aborted)) return Err(clientError(clientErrorCodes.aborted, clientMessages.aborted, 0, signals.find((s) => s.aborted)?.reason))
    // A stream always gets a signal of ours: leaving its loop aborts the request.
    if (signals.length === 0 && !(timeout > 0) && !acceptStream) return receive(request(init), undefined, unwrapValue)
    const start = (signal: AbortSignal) => {
      init.signal = signal
      return request(init)
    }
    // A resumable stream is sent again after a drop: the same body, a fresh token, `Last-Event-ID`.
    const reopen = async (signal: AbortSignal, lastEventId: string): Promise<Response | ClientError> => {
      const again = await headersFor(options, call, 'application/json')
      if (!(again instanceof Headers)) return again
      if (!again.has('accept')) again.set('accept', ACCEPT_STREAM)
      if (lastEventId !== '') again.set('last-event-id', lastEventId)
      return request({ ...init, headers: again, signal })
    }
    const resume = acceptStream && attempts > 0 ? { attempts, reopen } : undefined
    return receiveUntilStopped(start, signals, timeout, unwrapValue, acceptStream, resume)
  }
}

/** `resume.attempts`: 5 by default, 0 with `resume: false`. */
function resumeAttempts(option: ClientOptions['resume']): number {
  if (option === false) return 0
  const attempts = option?.attempts
  return typeof attempts === 'number' && Number.isFinite(attempts) && attempts >= 0 ? Math.floor(attempts) : DEFAULT_RESUME_ATTEMPTS
}

const DEFAULT_RESUME_ATTEMPTS = 5

type Resume = { attempts: number; reopen(signal: AbortSignal, lastEventId: string): Promise<Response | ClientError> }

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
 * its signal (`app.fetch` over inject) still stops. A stream's call keeps listening to the caller's
 * signals until the stream ends; its timeout ends when the stream starts.
 */
async function receiveUntilStopped(
  start: (signal: AbortSignal) => Promise<Response>,
  signals: AbortSignal[],
  timeout: number,
  unwrapValue: boolean,
  acceptStream: boolean,
  resume?: Resume,
): Promise<ClientResult<unknown>> {
  const controller = new AbortController()
  let stop: 'timeout' | 'aborted' | undefined
  let reason: unknown
  let interrupt: (() => void) | undefined
  const halt = (why: 'timeout' | 'aborted', cause: unknown) => {
    if (stop) return
    stop = why
    reason = cause
    controller.abort(cause)
    interrupt?.()
  }
  const stopError = () =>
    stop === 'timeout'
      ? clientError(clientErrorCodes.timeout, clientMessages.timeout(timeout))
      : clientError(clientErrorCodes.aborted, clientMessages.aborted, 0, reason)
  const onAbort = (event: Event) => halt('aborted', (event.target as AbortSignal).reason)
  for (const signal of signals) signal.addEventListener('abort', onAbort, { once: true })
  const timer = timeout > 0 ? setTimeout(() => halt('timeout', undefined), timeout) : undefined
  const release = () => {
    for (const signal of signals) signal.removeEventListener('abort', onAbort)
  }
  const stopped = new Promise<typeof STOPPED>((resolve) => controller.signal.addEventListener('abort', () => resolve(STOPPED), { once: true }))
  let streaming = false
  const streams: StreamOpener | undefined = acceptStream
    ? {
        abort: () => controller.abort(),
        stopped: () => (stop ? stopError() : undefined),
        release,
        signal: controller.signal,
        resume: resume && { attempts: resume.attempts, reopen: (lastEventId) => resume.reopen(controller.signal, lastEventId) },
        opened(onInterrupt) {
          streaming = true
          interrupt = onInterrupt
          clearTimeout(timer)
        },
      }
    : undefined
  try {
    const result = await receive(start(controller.signal), stopped, unwrapValue, streams)
    if (!stop) return result
    if (streaming && result.ok) (result.value as EventStream<unknown>).close() // stopped in the same tick it opened
    return Err(stopError())
  } finally {
    clearTimeout(timer)
    if (!streaming) release()
  }
}
