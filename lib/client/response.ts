import { clientError, clientErrorCodes, clientMessages, messageOf, type ClientError } from './errors.js'
import { Err, Ok } from './result.js'
import { toResult } from './envelope.js'
import { isEventStream, openEventStream, type StreamControl } from './stream.js'
import type { ClientResult } from './types.js'

/** What the race of an answer against an abort or a timeout yields when the abort or timeout wins. */
export const STOPPED = Symbol('stopped')

/** How a call that accepts a stream lets the stream end it; `opened` hands the caller the stream's interrupt. */
export interface StreamOpener extends StreamControl {
  opened(interrupt: () => void): void
}

/**
 * Reads the answer; `stopped` settles first when the call was aborted or timed out (the caller then
 * reports which). With `streams`, a successful `text/event-stream` answer is `Ok(EventStream)`.
 */
export async function receive(pending: Promise<Response>, stopped: Promise<typeof STOPPED> | undefined, unwrapValue: boolean, streams?: StreamOpener): Promise<ClientResult<unknown>> {
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
  if (streams && response.ok && isEventStream(response)) {
    const { stream, interrupt } = openEventStream(response, streams)
    streams.opened(interrupt)
    return Ok(stream)
  }
  let text: string | typeof STOPPED
  try {
    text = await race(response.text())
  } catch (error) {
    return Err(clientError(clientErrorCodes.network, clientMessages.unreadable(messageOf(error)), response.status, error))
  }
  if (text === STOPPED) return Err(clientError(clientErrorCodes.aborted, clientMessages.aborted)) // replaced by the caller, who knows why
  return toResult(response, text, unwrapValue)
}
