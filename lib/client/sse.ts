/**
 * A Server-Sent Events parser, as the WHATWG HTML standard defines "parsing an event stream"
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation).
 * Local rather than a dependency: the client has no runtime dependency and ships to browsers.
 * Tested against `eventsource-parser` on the same inputs (test/client/sse.test.ts).
 */

/** One dispatched event: its type (`message` by default), its data, and the last event id seen. */
export interface SseEvent {
  event: string
  data: string
  id: string
}

export interface SseParser {
  /** Feeds decoded text, cut anywhere (inside a line, between `\r` and `\n`). */
  feed(text: string): void
}

const lineEnd = /\r\n?|\n/g

/** What the stream's reader wants besides the events: the `retry` field and the comments. */
export interface SseFields {
  /** A `retry:` field of digits only (WHATWG): the reconnection delay in ms. */
  retry?(ms: number): void
  /** A comment line, without its `:` (the server's `: resumable`, its keep-alives). */
  comment?(text: string): void
}

export function createSseParser(onEvent: (event: SseEvent) => void, fields: SseFields = {}): SseParser {
  let pending: string[] = [] // the start of a line not ended yet, in pieces (joined once its end arrives)
  let first = true
  let afterCR = false // the last chunk ended on `\r`: a `\n` starting the next one belongs to it
  let data: string[] = []
  let type = ''
  let lastId = ''

  function dispatch() {
    if (data.length > 0) onEvent({ event: type || 'message', data: data.join('\n'), id: lastId })
    data = []
    type = ''
  }

  function line(text: string) {
    if (text === '') return dispatch()
    if (text.charCodeAt(0) === 58) return fields.comment?.(text.slice(1).trim()) // `:` a comment (keep-alive, resumable)
    const colon = text.indexOf(':')
    const field = colon === -1 ? text : text.slice(0, colon)
    let value = colon === -1 ? '' : text.slice(colon + 1)
    if (value.charCodeAt(0) === 32) value = value.slice(1)
    if (field === 'data') data.push(value)
    else if (field === 'event') type = value
    else if (field === 'id') {
      if (!value.includes('\0')) lastId = value
    }
    else if (field === 'retry' && /^\d+$/.test(value)) fields.retry?.(Number(value))
  }

  return {
    feed(chunk) {
      // An empty chunk (an empty read, or bytes the decoder holds back) must not end a pending `\r`'s wait.
      if (chunk === '') return
      if (first) {
        first = false
        if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1)
      }
      if (afterCR && chunk.charCodeAt(0) === 10) chunk = chunk.slice(1)
      afterCR = false
      if (!/[\r\n]/.test(chunk)) {
        if (chunk !== '') pending.push(chunk)
        return
      }
      pending.push(chunk)
      const text = pending.join('')
      let start = 0
      lineEnd.lastIndex = 0
      for (let match = lineEnd.exec(text); match !== null; match = lineEnd.exec(text)) {
        // A `\r` at the very end may be the first half of `\r\n`: the line ends either way.
        if (match[0] === '\r' && match.index === text.length - 1) afterCR = true
        line(text.slice(start, match.index))
        start = lineEnd.lastIndex
      }
      pending = start < text.length ? [text.slice(start)] : []
    },
  }
}
