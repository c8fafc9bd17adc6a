import { clientError, clientErrorCodes, clientMessages, messageOf, StreamError, type ClientError } from './errors.js'
import { Err, Ok } from './result.js'
import { envelopeError, isEnvelope, toResult, unwrap } from './envelope.js'
import { createSseParser, type SseEvent } from './sse.js'
import type { ClientResult, EventStream } from './types.js'

/** The comment a resumable stream's first frame carries (`: resumable`, plugins/sse.ts). */
const RESUMABLE = 'resumable'
/** The id of a stream's final event: the stream is over, there is nothing to resume (plugins/sse.ts). */
const END_ID = 'end'
/** The reconnection delay (ms) until the server's `retry:` field says otherwise. */
const DEFAULT_RETRY = 3000

export const isEventStream = (response: Response) => /^text\/event-stream\b/i.test(response.headers.get('content-type') ?? '')

/** What a stream needs of the call that opened it. */
export interface StreamControl {
  /** Ends the request (aborts the fetch, so the server sees the disconnect). */
  abort(): void
  /** The caller's abort, when the call's or the client's signal stopped it. */
  stopped(): ClientError | undefined
  /** Called once when the stream ends, however it ends. */
  release(): void
  /** Aborts with the call: a wait before reconnecting ends with it. */
  signal?: AbortSignal
  /**
   * Resuming a stream the server marked resumable: at most `attempts` reconnections in a row without
   * an event between them; `reopen` sends the call again with `Last-Event-ID`. Absent: never resumed.
   */
  resume?: { attempts: number; reopen(lastEventId: string): Promise<Response | ClientError> }
}

/** What the reader of one stream knows across its connections. */
interface ReadState {
  status: number
  lastEventId: string
  retry: number
  resumable: boolean
  /** Reconnections since the last event. */
  failures: number
  closing: boolean
}

/** How one connection's answer ended: the final value, or a drop (a cut, a shutdown without the end id) the stream may resume from. */
type Outcome = { done: unknown } | { dropped: ClientError }

/** One SSE event as the next step: a value, the end, a failure (`resumable`: it did not carry the end id), or nothing to do. */
type Step = { value: unknown } | { done: unknown } | { error: ClientError; resumable: boolean } | undefined

function interpret(event: SseEvent, status: number): Step {
  if (event.event === 'message') {
    try {
      return { value: JSON.parse(event.data) }
    } catch {
      return { error: clientError(clientErrorCodes.badResponse, clientMessages.eventNotJson, status, event.data), resumable: false }
    }
  }
  if (event.event !== 'done' && event.event !== 'error') return undefined // a kind this client does not know yet
  let envelope: unknown
  try {
    envelope = JSON.parse(event.data)
  } catch {
    envelope = undefined
  }
  if (!isEnvelope(envelope)) return { error: clientError(clientErrorCodes.badResponse, clientMessages.eventNotEnvelope, status, event.data), resumable: false }
  if (event.event === 'done' && envelope.status) return { done: unwrap(envelope.data) }
  return { error: envelopeError(envelope, status), resumable: event.id !== END_ID }
}

/** The events of one connection, until its final event or its drop. */
async function* readConnection(response: Response, state: ReadState, control: StreamControl): AsyncGenerator<unknown, Outcome, undefined> {
  const reader = response.body?.getReader()
  const cut = () => ({ dropped: clientError(clientErrorCodes.network, clientMessages.streamCut, response.status) })
  if (!reader) return cut()
  const decoder = new TextDecoder()
  const queue: SseEvent[] = []
  const parser = createSseParser((event) => queue.push(event), { retry: (ms) => (state.retry = ms), comment: (text) => (state.resumable ||= text === RESUMABLE) })
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>
      try {
        chunk = await reader.read()
      } catch (error) {
        const stop = control.stopped()
        if (stop) throw new StreamError(stop)
        return { dropped: clientError(clientErrorCodes.network, clientMessages.unreadable(messageOf(error)), response.status, error) }
      }
      parser.feed(chunk.done ? decoder.decode() : decoder.decode(chunk.value, { stream: true }))
      for (let index = 0; index < queue.length; index++) {
        const stop = control.stopped()
        if (stop) throw new StreamError(stop) // a fetch that ignores its signal (app.fetch) still stops here
        const event = queue[index]!
        const step = interpret(event, response.status)
        if (step === undefined) continue
        if ('done' in step) return step
        if ('error' in step) {
          if (step.resumable && state.resumable) return { dropped: step.error } // the server shut down: go on elsewhere
          throw new StreamError(step.error)
        }
        // The id of the last value event (the final one's, `end`, only says the stream is over).
        state.lastEventId = event.id
        state.failures = 0
        yield step.value
        if (state.closing) return { dropped: clientError(clientErrorCodes.aborted, clientMessages.streamClosed, response.status) }
      }
      queue.length = 0
      if (chunk.done) return cut()
    }
  } finally {
    reader.cancel().catch(() => {})
  }
}

/** Waits `ms`, or less when the call is aborted. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })
}

/**
 * After a drop: the call again with `Last-Event-ID`, `retry` ms later, while the stream is resumable
 * and attempts remain. The new connection's answer, or the StreamError that ends the stream: the
 * drop's own, a refusal's (a 401, a 400), or the last failed attempt's.
 */
async function resumeAfter(dropped: ClientError, state: ReadState, control: StreamControl): Promise<Response> {
  let last = dropped
  const resume = state.resumable ? control.resume : undefined
  while (resume && state.failures < resume.attempts) {
    state.failures++
    await pause(state.retry, control.signal)
    const stop = control.stopped()
    if (stop || state.closing) throw new StreamError(stop ?? last)
    let answer: Response | ClientError
    try {
      answer = await resume.reopen(state.lastEventId)
    } catch (error) {
      last = control.stopped() ?? clientError(clientErrorCodes.network, clientMessages.network(messageOf(error)), 0, error)
      continue
    }
    if (!(answer instanceof Response)) throw new StreamError(answer)
    if (answer.ok && isEventStream(answer)) return answer
    // 204: the server has nothing to resume (the stream had ended, or the action is not resumable).
    if (answer.status === 204) break
    const refused = toResult(answer, await answer.text().catch(() => ''), false)
    last = refused.ok ? clientError(clientErrorCodes.badResponse, clientMessages.notEnvelope(answer.status), answer.status) : refused.error
    // A balancer's 502/503/504 (an instance going away) is worth another attempt; any other refusal ends it.
    if (![502, 503, 504].includes(answer.status)) break
  }
  throw new StreamError(last)
}

/**
 * The events of an answer with `content-type: text/event-stream` (the server's wire format:
 * `message` events of one JSON value each, then `done` or `error` with an envelope). A stream the
 * server marked resumable continues over a new connection after a drop (`control.resume`).
 */
export function openEventStream(response: Response, control: StreamControl): { stream: EventStream<unknown, unknown>; interrupt(): void } {
  let settle!: (result: ClientResult<unknown>) => void
  const final = new Promise<ClientResult<unknown>>((resolve) => (settle = resolve))
  let ended = false
  let started = false
  const state: ReadState = { status: response.status, lastEventId: '', retry: DEFAULT_RETRY, resumable: false, failures: 0, closing: false }
  const end = (result: ClientResult<unknown>) => {
    if (ended) return
    ended = true
    settle(result)
    control.release()
  }

  async function* read(): AsyncGenerator<unknown, void, undefined> {
    started = true
    try {
      for (let current = response; ; ) {
        const outcome = yield* readConnection(current, state, control)
        if (state.closing) return
        if ('done' in outcome) return end(Ok(outcome.done))
        current = await resumeAfter(outcome.dropped, state, control)
      }
    } catch (error) {
      if (state.closing) return
      const failure = error instanceof StreamError ? error : new StreamError(clientError(clientErrorCodes.badResponse, clientMessages.unreadable(messageOf(error)), state.status, error))
      end(Err(failure))
      throw failure
    } finally {
      // Left early (break, close, a failure): end the request so the server stops; after `done` it is already over.
      if (!ended) control.abort()
      end(Err(clientError(clientErrorCodes.aborted, clientMessages.streamClosed, state.status)))
    }
  }

  const iterator = read()
  const stop = (error: ClientError) => {
    if (started) return
    // Nobody reads yet: the generator never ran, so its `finally` will not either.
    response.body?.cancel().catch(() => {})
    end(Err(error))
  }
  const stream: EventStream<unknown, unknown> = {
    [Symbol.asyncIterator]: () => iterator,
    isError: (error: unknown): error is StreamError => error instanceof StreamError,
    final,
    get lastEventId() {
      return state.lastEventId
    },
    close() {
      if (state.closing) return
      state.closing = true
      control.abort()
      stop(clientError(clientErrorCodes.aborted, clientMessages.streamClosed, response.status))
      void iterator.return(undefined)
    },
  }
  return {
    stream,
    /** The caller's signal fired: a stream nobody reads settles `final` now; a loop throws at its next step. */
    interrupt() {
      const error = control.stopped()
      if (error) stop(error)
    },
  }
}
