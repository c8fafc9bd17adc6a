import { clientError, clientErrorCodes, clientMessages, messageOf, type ClientError } from './errors.js'
import { Err, Ok } from './result.js'
import { isEnvelope, unwrap } from './envelope.js'
import { openEventStream, type StreamControl } from './stream.js'
import type { ClientResult } from './types.js'

/** What the race of an answer against an abort or a timeout yields when the abort or timeout wins. */
export const STOPPED = Symbol('stopped')

/** How a call that accepts a stream lets the stream end it; `opened` hands the caller the stream's interrupt. */
export interface StreamOpener extends StreamControl {
  opened(interrupt: () => void): void
}

const isEventStream = (response: Response) => /^text\/event-stream\b/i.test(response.headers.get('content-type') ?? '')

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

/** An answer's text as a Result: the envelope's data, or its error, or why it is no envelope. */
function toResult(response: Response, text: string, unwrapValue: boolean): ClientResult<unknown> {
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
  // A declared error sends its code in `data` (`{ code: 'NOT_FOUND', ... }`): it becomes the error's code.
  if (typeof body.code === 'string') error.code = body.code
  else if (typeof body.data.code === 'string') error.code = body.data.code
  return Err(error)
}
