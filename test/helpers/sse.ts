import { request as httpRequest, type IncomingMessage, type ClientRequest } from 'node:http'
import { createParser, type EventSourceMessage } from 'eventsource-parser'

/** One SSE response read over a real socket with a third-party parser (eventsource-parser). */
export interface OpenStream {
  status: number
  headers: IncomingMessage['headers']
  /** Parsed events as they arrive. */
  events: EventSourceMessage[]
  comments: string[]
  /** The raw text received (for JSON refusals and exact wire checks). */
  text: () => string
  /** Resolves once `predicate(events)` holds or the response ended. */
  until: (predicate: (events: EventSourceMessage[]) => boolean) => Promise<EventSourceMessage[]>
  ended: Promise<void>
  /** Closes the connection, as a browser tab that goes away. */
  destroy: () => void
  request: ClientRequest
  response: IncomingMessage
}

export function openStream(
  port: number,
  path: string,
  body: unknown,
  headers: Record<string, string> = { accept: 'text/event-stream' },
): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body)
    const request = httpRequest(
      { host: '127.0.0.1', port, path, method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers } },
      (response) => {
        const events: EventSourceMessage[] = []
        const comments: string[] = []
        const chunks: string[] = []
        const waiters = new Set<() => void>()
        const parser = createParser({ onEvent: (event) => events.push(event), onComment: (comment) => comments.push(comment) })
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => {
          chunks.push(chunk)
          parser.feed(chunk)
          for (const wake of waiters) wake()
        })
        let done = false
        const ended = new Promise<void>((resolveEnd) => {
          const finish = () => {
            done = true
            for (const wake of waiters) wake()
            resolveEnd()
          }
          response.on('end', finish)
          response.on('close', finish)
          response.on('error', finish)
        })
        const until = (predicate: (events: EventSourceMessage[]) => boolean) =>
          new Promise<EventSourceMessage[]>((resolveUntil) => {
            const check = () => {
              if (predicate(events) || done) {
                waiters.delete(check)
                resolveUntil(events)
              }
            }
            waiters.add(check)
            check()
          })
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          events,
          comments,
          text: () => chunks.join(''),
          until,
          ended,
          destroy: () => request.destroy(),
          request,
          response,
        })
      },
    )
    request.on('error', reject)
    request.end(payload)
  })
}
