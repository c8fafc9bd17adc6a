import { clientError, clientErrorCodes, clientMessages, messageOf, StreamError, type ClientError } from './errors.js'
import { Err, Ok } from './result.js'
import { isEnvelope, unwrap } from './envelope.js'
import { createSseParser, type SseEvent } from './sse.js'
import type { ClientResult, EventStream } from './types.js'

/** What a stream needs of the call that opened it. */
export interface StreamControl {
  /** Ends the request (aborts the fetch, so the server sees the disconnect). */
  abort(): void
  /** The caller's abort, when the call's or the client's signal stopped it. */
  stopped(): ClientError | undefined
  /** Called once when the stream ends, however it ends. */
  release(): void
}

/**
 * The events of an answer with `content-type: text/event-stream` (the server's wire format:
 * `message` events of one JSON value each, then `done` or `error` with an envelope).
 */
export function openEventStream(response: Response, control: StreamControl): { stream: EventStream<unknown, unknown>; interrupt(): void } {
  let settle!: (result: ClientResult<unknown>) => void
  const final = new Promise<ClientResult<unknown>>((resolve) => (settle = resolve))
  let ended = false
  let started = false
  let closing = false
  let lastEventId = ''

  const end = (result: ClientResult<unknown>) => {
    if (ended) return
    ended = true
    settle(result)
    control.release()
  }
  const fail = (error: ClientError) => new StreamError(error)

  /** An SSE event as the next step: a value to yield, or the end. */
  function interpret(event: SseEvent): { value: unknown } | 'done' | 'skip' {
    if (event.event === 'message') {
      try {
        return { value: JSON.parse(event.data) }
      } catch {
        throw fail(clientError(clientErrorCodes.badResponse, clientMessages.eventNotJson, response.status, event.data))
      }
    }
    if (event.event !== 'done' && event.event !== 'error') return 'skip' // a kind this client does not know yet
    let envelope: unknown
    try {
      envelope = JSON.parse(event.data)
    } catch {
      envelope = undefined
    }
    if (!isEnvelope(envelope)) throw fail(clientError(clientErrorCodes.badResponse, clientMessages.eventNotEnvelope, response.status, event.data))
    if (event.event === 'done' && envelope.status) {
      end(Ok(unwrap(envelope.data)))
      return 'done'
    }
    const error: ClientError = { status: false, message: envelope.message, data: envelope.data, httpStatus: response.status }
    // A declared error (`Fail`) sends its code in `data`, as a refusal's envelope does (response.ts).
    if (typeof envelope.code === 'string') error.code = envelope.code
    else if (typeof envelope.data.code === 'string') error.code = envelope.data.code
    throw fail(error)
  }

  async function* read(): AsyncGenerator<unknown, void, undefined> {
    started = true
    const body = response.body
    const reader = body?.getReader()
    const decoder = new TextDecoder()
    const queue: SseEvent[] = []
    const parser = createSseParser((event) => queue.push(event))
    try {
      if (!reader) throw fail(clientError(clientErrorCodes.network, clientMessages.streamCut, response.status))
      for (;;) {
        let chunk: ReadableStreamReadResult<Uint8Array>
        try {
          chunk = await reader.read()
        } catch (error) {
          throw fail(control.stopped() ?? clientError(clientErrorCodes.network, clientMessages.unreadable(messageOf(error)), response.status, error))
        }
        parser.feed(chunk.done ? decoder.decode() : decoder.decode(chunk.value, { stream: true }))
        for (let index = 0; index < queue.length; index++) {
          const stop = control.stopped()
          if (stop) throw fail(stop) // a fetch that ignores its signal (app.fetch) still stops here
          const event = queue[index]!
          const next = interpret(event)
          // The id of the last value event (the final one's, `end`, only says the stream is over).
          if (event.event === 'message') lastEventId = event.id
          if (next === 'done') return
          if (next !== 'skip') yield next.value
          if (closing) return
        }
        queue.length = 0
        if (chunk.done) throw fail(clientError(clientErrorCodes.network, clientMessages.streamCut, response.status))
      }
    } catch (error) {
      if (closing) return
      const failure = error instanceof StreamError ? error : fail(clientError(clientErrorCodes.badResponse, clientMessages.unreadable(messageOf(error)), response.status, error))
      end(Err(failure))
      throw failure
    } finally {
      // Left early (break, close, a failure): end the request so the server stops; after `done` it is already over.
      if (!ended) control.abort()
      reader?.cancel().catch(() => {})
      end(Err(clientError(clientErrorCodes.aborted, clientMessages.streamClosed, response.status)))
    }
  }

  const iterator = read()
  const stop = (error: ClientError) => {
    if (!started) {
      // Nobody reads yet: the generator never ran, so its `finally` will not either.
      response.body?.cancel().catch(() => {})
      end(Err(error))
    }
  }
  const stream: EventStream<unknown, unknown> = {
    [Symbol.asyncIterator]: () => iterator,
    isError: (error: unknown): error is StreamError => error instanceof StreamError,
    final,
    get lastEventId() {
      return lastEventId
    },
    close() {
      if (closing) return
      closing = true
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
