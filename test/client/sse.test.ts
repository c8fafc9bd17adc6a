import t from 'tap'
import fc from 'fast-check'
import { createParser } from 'eventsource-parser'
import { createSseParser, type SseEvent } from '../../lib/client/sse.js'

// The client's SSE parser against eventsource-parser (a third-party WHATWG parser) on the same input,
// cut into the same chunks: the same events, with the same types, data and ids.

function ours(chunks: string[]): SseEvent[] {
  const events: SseEvent[] = []
  const parser = createSseParser((event) => events.push(event))
  for (const chunk of chunks) parser.feed(chunk)
  return events
}

/**
 * eventsource-parser's events, each with the id its own block set (undefined when none did): it has no
 * last-event-ID buffer to report, and an id set in a block without data is gone for it, where the
 * standard keeps it for the next event (ours does: 'the details of the standard' below).
 */
function theirs(chunks: string[]): Array<{ event: string; data: string; id: string | undefined }> {
  const events: Array<{ event: string; data: string; id: string | undefined }> = []
  const parser = createParser({ onEvent: (event) => events.push({ event: event.event ?? 'message', data: event.data, id: event.id }) })
  for (const chunk of chunks) parser.feed(chunk)
  return events
}

/** The same events: types and data equal, ids equal wherever theirs knows the id. */
function agree(mine: SseEvent[], reference: ReturnType<typeof theirs>): boolean {
  return mine.length === reference.length && mine.every((event, i) => event.event === reference[i]!.event && event.data === reference[i]!.data && (reference[i]!.id === undefined || event.id === reference[i]!.id))
}

/** Cuts a text at the given offsets. */
function cut(text: string, offsets: number[]): string[] {
  const points = [...new Set(offsets.map((offset) => offset % (text.length + 1)))].sort((a, b) => a - b)
  const chunks: string[] = []
  let start = 0
  for (const point of points) {
    chunks.push(text.slice(start, point))
    start = point
  }
  chunks.push(text.slice(start))
  return chunks
}

const ours1 = (text: string) => ours([text])

t.test('the server wire format: message events with ids, done and error, keep-alive comments', async (t) => {
  const wire =
    ': keep-alive\n\n' +
    'id: 0\nevent: message\ndata: {"n":1}\n\n' +
    'id: 1\nevent: message\ndata: "two"\n\n' +
    ': keep-alive\n\n' +
    'event: done\ndata: {"status":true,"message":"Action executed successfully","data":{"result":2}}\n\n'
  const events = ours1(wire)
  t.same(events, [
    { event: 'message', data: '{"n":1}', id: '0' },
    { event: 'message', data: '"two"', id: '1' },
    { event: 'done', data: '{"status":true,"message":"Action executed successfully","data":{"result":2}}', id: '1' },
  ])
  t.ok(agree(events, theirs([wire])))
})

t.test('the details of the standard', async (t) => {
  t.same(ours1('data: a\ndata: b\n\n'), [{ event: 'message', data: 'a\nb', id: '' }], 'data lines joined with \\n')
  t.same(ours1('data:a\r\n\r\ndata:  b\r\r'), [{ event: 'message', data: 'a', id: '' }, { event: 'message', data: ' b', id: '' }], 'CRLF and CR; one space removed')
  t.same(ours1('data\n\n'), [{ event: 'message', data: '', id: '' }], 'a field without a colon')
  t.same(ours1('event: x\n\ndata: y\n\n'), [{ event: 'message', data: 'y', id: '' }], 'no data: nothing dispatched, the type reset')
  t.same(ours1('id: 7\n\ndata: a\n\n'), [{ event: 'message', data: 'a', id: '7' }], 'an id in a block without data is kept for the next event (the last event ID buffer)')
  t.same(ours1('id: 7\ndata: a\n\nid: a\0b\ndata: b\n\n'), [{ event: 'message', data: 'a', id: '7' }, { event: 'message', data: 'b', id: '7' }], 'an id with NUL is ignored')
  t.same(ours1('data: unterminated'), [], 'an event without its blank line is not dispatched')
  t.same(ours1('\uFEFFdata: bom\n\n'), [{ event: 'message', data: 'bom', id: '' }], 'a BOM at the start is dropped')
  t.same(ours1('data\r\n\r'), [{ event: 'message', data: '', id: '' }], 'a CR at the very end is a line end (a property test counterexample)')
  t.same(ours(['data\r', '', '\n']), [], 'an empty chunk between CR and LF: still one line end, no blank line')
  t.same(ours(['data:\r\n\r', 'data']), [{ event: 'message', data: '', id: '' }], 'a CR ending a chunk, then no LF: the blank line dispatches at once (a property test counterexample)')
  t.same(ours(['data: a\r', '\n', '\r', '\ndata: b\n\n']), [{ event: 'message', data: 'a', id: '' }, { event: 'message', data: 'b', id: '' }], 'CRLF cut in two')
  t.same(ours(['da', 'ta: é', 'té\n', '\n']), [{ event: 'message', data: 'été', id: '' }], 'a line cut anywhere')
})

t.test('the same events as eventsource-parser, for any input cut anywhere', async (t) => {
  const piece = fc.constantFrom('data', 'event', 'id', 'retry', ':', ' ', 'x', 'é', '{"a":1}', '\n', '\r', '\r\n', '\n\n', '\0', 'message', 'done', ': keep-alive')
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 60 }), fc.array(fc.nat(), { maxLength: 8 }), (pieces, offsets) => {
      const text = pieces.join('')
      const chunks = cut(text, offsets)
      // A CR that ends a chunk ends its line (WHATWG): ours knows it once the next chunk does not start
      // with LF; eventsource-parser keeps it pending until a later chunk holds a line end, so at the
      // end of the input it may still hold an event ours gave (seed -1328369859: '\n\ndata:\r\n\r' then
      // 'data'). A last LF settles theirs and changes nothing for ours: both then agree on everything.
      chunks.push('\n')
      return agree(ours(chunks), theirs(chunks))
    }),
    { numRuns: 2000, examples: [[['data', '\r\n', '\r'], []], [['data', '\r'], [5]]] },
  )
  t.pass('2000 inputs agree')
})

t.test('a long line in many small chunks is parsed in linear time', async (t) => {
  const chunks = ['data: ', ...Array.from({ length: 20_000 }, () => 'x'.repeat(50)), '\n\n']
  const events = ours(chunks)
  t.equal(events.length, 1)
  t.equal(events[0]!.data.length, 1_000_000)
})
