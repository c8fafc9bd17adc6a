import t from 'tap'
import Type from 'typebox'
import { CallToolResultSchema, type CallToolResult, type Progress } from '@modelcontextprotocol/sdk/types.js'
import { createAction, createService, getActions, Ok } from '../lib/index.js'
import { connectClient, startMcpServer, textOf } from './helpers/mcp.js'

// A streaming action as an MCP tool, through the SDK's own client: its events collected into the
// result, each also a progress notification while the call runs, and a cancelled call stops it.

/** What the test learns from inside the handlers: which generators ran their `finally`, and why. */
const seen = { closed: [] as string[], reasons: [] as string[] }
let onClosed: (() => void) | undefined
let onStarted: (() => void) | undefined
const closed = () => new Promise<void>((resolve) => (onClosed = resolve))

const tick = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })

const count = createAction({
  name: 'count',
  description: 'Yields { n } from 1 to `to`, returns how many',
  validation: Type.Object({ to: Type.Integer({ minimum: 0, maximum: 50 }) }),
  output: Type.Object({ n: Type.Integer() }),
  handler: async function* (data, context) {
    try {
      for (let n = 1; n <= data.to; n++) yield { n }
      return { counted: data.to }
    } finally {
      seen.closed.push(`count:${context.signal.aborted}`)
      onClosed?.()
    }
  },
})

const forever = createAction({
  name: 'forever',
  description: 'Yields a number every few ms until stopped',
  handler: async function* (_data, context) {
    try {
      onStarted?.()
      for (let n = 0; !context.signal.aborted; n++) {
        yield n
        await tick(5, context.signal)
      }
    } finally {
      seen.reasons.push(context.signal.aborted ? String((context.signal.reason as Error)?.message) : 'not aborted')
      seen.closed.push('forever')
      onClosed?.()
    }
  },
})

const breaks = createAction({
  name: 'breaks',
  description: 'One event, then a throw',
  handler: async function* () {
    yield 'first'
    throw new Error('the generator broke')
  },
})

const quiet = createAction({
  name: 'quiet',
  description: 'Returns nothing',
  handler: async function* () {
    yield 1
  },
})

const waits = createAction({
  name: 'waits',
  description: 'Not a stream: waits for its signal',
  handler: async (_data, context) => {
    const stopped = new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }))
    onStarted?.()
    await stopped
    seen.closed.push('waits')
    onClosed?.()
    return Ok('stopped')
  },
})

const services = [createService({ name: 'streams', description: 'Streaming tools', actions: [count, forever, breaks, quiet, waits] })]

const resultOf = (result: unknown) => result as CallToolResult

t.beforeEach(() => {
  seen.closed.length = 0
  seen.reasons.length = 0
  onClosed = undefined
  onStarted = undefined
})

t.test('tools/list: a streaming tool, its output schema is { events, final, truncated }', async (t) => {
  const server = await startMcpServer(t, { services })
  const client = await connectClient(t, server.url)
  const { tools } = await client.listTools()
  const tool = tools.find((candidate) => candidate.name === 'streams_count')!
  t.same(tool.outputSchema, {
    type: 'object',
    properties: {
      events: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } },
      final: { anyOf: [{ type: 'object' }, { type: 'array' }, { type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'null' }] },
      truncated: { type: 'boolean' },
    },
    required: ['events'],
  })
})

t.test('a call collects every event and the final value', async (t) => {
  const server = await startMcpServer(t, { services })
  const client = await connectClient(t, server.url)
  const result = resultOf(await client.callTool({ name: 'streams_count', arguments: { to: 3 } }))
  const expected = { events: [{ n: 1 }, { n: 2 }, { n: 3 }], final: { counted: 3 } }
  t.same(result, { content: [{ type: 'text', text: JSON.stringify(expected) }], structuredContent: expected })
  t.same(seen.closed, ['count:false'], 'the generator ran to its end')

  const nothing = resultOf(await client.callTool({ name: 'streams_quiet', arguments: {} }))
  t.same(nothing.structuredContent, { events: [1] }, 'no final value: no final key')

  const refused = resultOf(await client.callTool({ name: 'streams_count', arguments: { to: 'three' } }))
  t.equal(refused.isError, true, 'refused before the stream: as for any tool')
  t.equal(textOf(refused), 'Validation failed')
})

t.test('a failure after some events: isError, the message, then the events so far', async (t) => {
  const server = await startMcpServer(t, { services })
  const client = await connectClient(t, server.url)
  const result = resultOf(await client.callTool({ name: 'streams_breaks', arguments: {} }))
  t.same(result, { isError: true, content: [{ type: 'text', text: 'the generator broke' }, { type: 'text', text: '{"events":["first"]}' }] })
})

t.test('with a progressToken, each event is a progress notification while the call runs', async (t) => {
  const server = await startMcpServer(t, { services })
  const client = await connectClient(t, server.url)
  const progress: Progress[] = []
  const result = resultOf(await client.callTool({ name: 'streams_count', arguments: { to: 4 } }, CallToolResultSchema, { onprogress: (update) => progress.push(update) }))
  t.same(
    progress,
    [1, 2, 3, 4].map((n) => ({ progress: n, message: JSON.stringify({ n }) })),
  )
  t.same(result.structuredContent, { events: [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }], final: { counted: 4 } }, 'the result still has them all')
})

t.test('past rest.mcp.maxStreamEvents the action is stopped and the result says truncated', async (t) => {
  const server = await startMcpServer(t, { services, rest: { mcp: { enabled: true, maxStreamEvents: 3 } } })
  const client = await connectClient(t, server.url)
  const result = resultOf(await client.callTool({ name: 'streams_forever', arguments: {} }))
  t.same(result.structuredContent, { events: [0, 1, 2], truncated: true })
  t.same(seen.closed, ['forever'], "the generator's finally ran")
  t.same(seen.reasons, ['Action aborted: the stream was closed'], 'context.signal aborted, saying why once')
})

t.test('past rest.mcp.maxStreamBytes the action is stopped and the result says truncated, within the limit', async (t) => {
  // Each event's JSON, {"n":1}, is 7 bytes: 20 bytes hold two; the third would pass the limit and is left out.
  const server = await startMcpServer(t, { services, rest: { mcp: { enabled: true, maxStreamBytes: 20 } } })
  const client = await connectClient(t, server.url)
  const progress: Progress[] = []
  const result = resultOf(await client.callTool({ name: 'streams_count', arguments: { to: 5 } }, CallToolResultSchema, { onprogress: (update) => progress.push(update) }))
  t.same(result.structuredContent, { events: [{ n: 1 }, { n: 2 }], truncated: true })
  t.same(progress.map((update) => update.progress), [1, 2], 'a progress notification for each event kept, none for the one left out')
  t.same(seen.closed, ['count:true'], "the generator's finally ran, its signal aborted")
  const whole = resultOf(await client.callTool({ name: 'streams_count', arguments: { to: 2 } }))
  t.same(whole.structuredContent, { events: [{ n: 1 }, { n: 2 }], final: { counted: 2 } }, 'exactly at the limit: whole')
})

t.test('rest.mcp.maxStreamBytes defaults to 8 MiB and must be a positive integer', async (t) => {
  const server = await startMcpServer(t, { services })
  t.equal(getActions(server.app)?.config.rest?.mcp?.maxStreamBytes, 8 * 1024 * 1024)
  for (const bad of [0, -1, 1.5, '10']) {
    await t.rejects(startMcpServer(t, { services, rest: { mcp: { enabled: true, maxStreamBytes: bad as number } } }), { message: /rest\.mcp\.maxStreamBytes must be a positive integer/ })
  }
})

t.test('rest.mcp.maxStreamEvents must be a positive integer', async (t) => {
  for (const bad of [0, -1, 1.5, '10']) {
    await t.rejects(startMcpServer(t, { services, rest: { mcp: { enabled: true, maxStreamEvents: bad as number } } }), { message: /rest\.mcp\.maxStreamEvents must be a positive integer/ })
  }
})

t.test("the client's cancellation (notifications/cancelled) stops the action: its finally runs", async (t) => {
  const server = await startMcpServer(t, { services })
  const client = await connectClient(t, server.url)
  const controller = new AbortController()
  const finished = closed()
  const progress: Progress[] = []
  const call = client.callTool({ name: 'streams_forever', arguments: {} }, CallToolResultSchema, {
    signal: controller.signal,
    onprogress: (update) => {
      progress.push(update)
      if (progress.length === 3) controller.abort('enough')
    },
  })
  await t.rejects(call, /enough/, 'the SDK rejects the call at once')
  await finished
  t.same(seen.closed, ['forever'])
  t.same(progress.slice(0, 3).map((update) => update.progress), [1, 2, 3])
  // The server is fine afterwards: the next call answers.
  const next = resultOf(await client.callTool({ name: 'streams_count', arguments: { to: 1 } }))
  t.same(next.structuredContent, { events: [{ n: 1 }], final: { counted: 1 } })
})

t.test('without a progressToken too: a cancelled call stops the action', async (t) => {
  const server = await startMcpServer(t, { services })
  const client = await connectClient(t, server.url)
  const controller = new AbortController()
  const finished = closed()
  onStarted = () => controller.abort('stop')
  const call = client.callTool({ name: 'streams_forever', arguments: {} }, CallToolResultSchema, { signal: controller.signal })
  await t.rejects(call, /stop/)
  await finished
  t.same(seen.closed, ['forever'])
})

t.test('any tool: a cancelled call aborts context.signal', async (t) => {
  const server = await startMcpServer(t, { services })
  const client = await connectClient(t, server.url)
  const controller = new AbortController()
  const finished = closed()
  onStarted = () => controller.abort('stop')
  const call = client.callTool({ name: 'streams_waits', arguments: {} }, CallToolResultSchema, { signal: controller.signal })
  await t.rejects(call, /stop/)
  await finished
  t.same(seen.closed, ['waits'])
})

t.test('a cancellation reaches only the caller\'s own call (same credential), over raw HTTP', async (t) => {
  const server = await startMcpServer(t, { services })
  const post = (body: unknown, authorization: string) =>
    fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization },
      body: JSON.stringify(body),
    })
  const finished = closed()
  const call = await post({ jsonrpc: '2.0', id: 'call-1', method: 'tools/call', params: { name: 'streams_forever', arguments: {}, _meta: { progressToken: 'p' } } }, 'Bearer a')
  t.equal(call.status, 200)
  t.match(call.headers.get('content-type'), /^text\/event-stream/, 'answered as SSE: the progress goes out while it runs')
  const events = sseMessages(call.body!)
  const progressCount = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const next = await events.next()
      t.equal((next.value as { method?: string })?.method, 'notifications/progress')
    }
  }
  await progressCount(1)
  const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'call-1', reason: 'not yours' } }
  t.equal((await post(cancel, 'Bearer b')).status, 202, 'another credential: accepted as any notification…')
  await progressCount(3) // …and the call goes on
  t.same(seen.closed, [])
  t.equal((await post({ ...cancel, params: { requestId: 'call-1', reason: 'mine' } }, 'Bearer a')).status, 202)
  await finished
  t.same(seen.closed, ['forever'], 'the caller\'s own cancellation stops it')
  for (;;) {
    const next = await events.next() // progress already on the way, then the end: no response for a cancelled call
    if (next.done) break
    t.equal((next.value as { method?: string }).method, 'notifications/progress')
  }
})

/** The JSON-RPC messages of an SSE answer, parsed with eventsource-parser. */
async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown> {
  const { EventSourceParserStream } = await import('eventsource-parser/stream')
  const reader = body.pipeThrough(new TextDecoderStream() as unknown as ReadableWritablePair<string, Uint8Array>).pipeThrough(new EventSourceParserStream()).getReader()
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return
    if (value.data) yield JSON.parse(value.data)
  }
}
