/**
 * Resume, the WHATWG way, with clients nobody here wrote: `eventsource` (v4, POST through its fetch
 * option) and `@microsoft/fetch-event-source`. Every stream starts with `retry:`, its final event's id
 * (`end`) marks the end, a `Last-Event-ID` for a finished or non-resumable stream answers 204 (the
 * action does not run again), and a `resumable: true` action continues from `context.lastEventId`.
 */
import t, { type Test } from 'tap'
import { EventSource } from 'eventsource'
import { fetchEventSource } from '@microsoft/fetch-event-source'
import Type from 'typebox'
import { createAction, createService, messages, withEventId } from '../lib/index.js'
import { buildServer } from './helpers/server.js'

const tick = () => new Promise((resolve) => setTimeout(resolve, 5))

/** A table the resumable action tails by id. */
const table = Array.from({ length: 6 }, (_, i) => ({ id: i + 1, title: `row ${i + 1}` }))
/** Each run of an action: the `Last-Event-ID` it was given. */
const runs: Record<string, Array<string | undefined>> = { once: [], tail: [] }

const once = createAction({
  name: 'once',
  description: 'Not resumable: three events with a side effect per run',
  validation: Type.Object({ n: Type.Integer({ minimum: 0, maximum: 10 }) }),
  handler: async function* (data, context) {
    runs.once.push(context.lastEventId)
    for (let i = 0; i < data.n; i++) {
      await tick()
      yield { i }
    }
    return { n: data.n }
  },
})

const tail = createAction({
  name: 'tail',
  description: 'Tails a table by id; resumes after the last id the client received',
  resumable: true,
  handler: async function* (_data, context) {
    runs.tail.push(context.lastEventId)
    // The recipe of docs/streaming.md: the id is the row's, the store is where the data lives.
    const after = Number.parseInt(context.lastEventId ?? '0', 10) || 0
    for (const row of table.filter((r) => r.id > after)) {
      await tick()
      yield withEventId(row.id, row)
    }
    return { rows: table.length }
  },
})

const service = createService({ name: 'feed', description: 'resume', actions: [once, tail] })

const server = await buildServer({ services: [service], rest: { openapi: { actionRoutes: true } } })
t.teardown(() => server.close())
await server.app.listen({ port: 0, host: '127.0.0.1' })
const base = `http://127.0.0.1:${(server.app.server.address() as { port: number }).port}/api/services/feed`

/**
 * A fetch whose first answer is cut after `events` message events, as a dropped connection is: the
 * reader sees an error; the real request is cancelled (the server sees the client go away).
 */
function cuttingFetch(events: number) {
  let calls = 0
  const seen: Array<string | null> = []
  const cut = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    seen.push(new Headers(init?.headers).get('last-event-id'))
    const response = await fetch(input, init)
    if (calls++ > 0 || !response.body) return response
    const reader = response.body.getReader()
    const decoder = new TextDecoder()
    let text = ''
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const chunk = await reader.read()
        if (chunk.done) return controller.close()
        text += decoder.decode(chunk.value, { stream: true })
        const blocks = text.split('\n\n')
        const messages = blocks.filter((block) => block.includes('event: message'))
        if (messages.length < events) return controller.enqueue(chunk.value)
        // Up to the end of the last event kept, then the connection drops.
        const keep = blocks.slice(0, blocks.indexOf(messages[events - 1]!) + 1).join('\n\n') + '\n\n'
        const sent = text.length - decoder.decode(chunk.value).length
        controller.enqueue(new TextEncoder().encode(keep.slice(sent)))
        await reader.cancel()
        controller.error(new TypeError('terminated: the connection dropped'))
      },
    })
    return new Response(body, { status: response.status, headers: response.headers })
  }
  return { fetch: cut, seen }
}

const post = (payload: unknown, fetchImpl: typeof fetch = fetch) => (url: string | URL, init: { headers: Record<string, string>; signal: unknown }) =>
  fetchImpl(url, { method: 'POST', body: JSON.stringify(payload), headers: { ...init.headers, 'content-type': 'application/json' }, signal: init.signal as AbortSignal })

t.test('the wire: retry first, ids by sequence or withEventId, the end marked; Last-Event-ID answers', async (t) => {
  const answer = await fetch(`${base}/tail`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  const text = await answer.text()
  t.ok(text.startsWith('retry: 3000\n: resumable\n\nid: 1\nevent: message\ndata: {"id":1,"title":"row 1"}\n\n'), 'retry, then the rows with their own ids')
  t.ok(text.endsWith(`id: end\nevent: done\ndata: ${JSON.stringify({ status: true, message: messages.executed('feed', 'tail'), data: { rows: 6 } })}\n\n`))
  const resume = (action: string, lastEventId: string) =>
    server.app.inject({ method: 'POST', url: `/api/services/feed/${action}`, headers: { 'last-event-id': lastEventId }, payload: { n: 2 } })
  const before = runs.once.length
  for (const [action, id] of [['once', 'end'], ['once', '1'], ['tail', 'end']] as const) {
    const response = await resume(action, id)
    t.same([response.statusCode, response.body, response.headers['content-type']], [204, '', undefined], `${action} Last-Event-ID ${id}: 204`)
  }
  t.equal(runs.once.length, before, 'a non-resumable action did not run again')
  const resumed = await resume('tail', '4')
  t.equal(resumed.statusCode, 200)
  t.match(resumed.body, /^retry: 3000\n: resumable\n\nid: 5\nevent: message\ndata: \{"id":5,"title":"row 5"\}\n\nid: 6\n/)
  t.equal(runs.tail.at(-1), '4', 'the resumable action ran with context.lastEventId')
})

t.test('eventsource v4: a non-resumable action runs once; the reconnect after its end gets 204 and stops', async (t) => {
  const before = runs.once.length
  const { fetch: recording, seen } = cuttingFetch(Infinity)
  const source = new EventSource(`${base}/once`, { fetch: post({ n: 3 }, recording) })
  const data: string[] = []
  source.addEventListener('message', (event) => data.push(event.data))
  const stopped = await new Promise<{ code?: number }>((resolve) => (source.onerror = (error) => source.readyState === EventSource.CLOSED && resolve(error)))
  t.equal(stopped.code, 204, 'the server said 204: the EventSource closed for good')
  t.same(data, ['{"i":0}', '{"i":1}', '{"i":2}'])
  t.same(seen, [null, 'end'], 'it came back once, with the id of the end')
  t.equal(runs.once.length - before, 1, 'the action ran once')
})

t.test('eventsource v4: a dropped connection of a non-resumable action is not run again', async (t) => {
  const before = runs.once.length
  const cutting = cuttingFetch(1)
  const source = new EventSource(`${base}/once`, { fetch: post({ n: 3 }, cutting.fetch) })
  const stopped = await new Promise<{ code?: number }>((resolve) => (source.onerror = (error) => source.readyState === EventSource.CLOSED && resolve(error)))
  t.equal(stopped.code, 204)
  t.same(cutting.seen, [null, '0'])
  t.equal(runs.once.length - before, 1, 'the action ran once')
})

t.test('eventsource v4: a resumable action continues from its id after a dropped connection, then stops', async (t) => {
  const before = runs.tail.length
  const cutting = cuttingFetch(3)
  const source = new EventSource(`${base}/tail`, { fetch: post({}, cutting.fetch) })
  const ids: string[] = []
  source.addEventListener('message', (event) => ids.push(event.lastEventId))
  const stopped = await new Promise<{ code?: number }>((resolve) => (source.onerror = (error) => source.readyState === EventSource.CLOSED && resolve(error)))
  t.equal(stopped.code, 204)
  t.same(ids, ['1', '2', '3', '4', '5', '6'], 'every row once, in order')
  t.same(cutting.seen, [null, '3', 'end'])
  t.same(runs.tail.slice(before), [undefined, '3'], 'the second run continued after row 3')
})

/** fetch-event-source is a browser library: it reaches for `window` and `document`. */
function browserGlobals(t: Test) {
  const globals = globalThis as Record<string, unknown>
  globals.window = globalThis
  globals.document = { hidden: false, addEventListener() {}, removeEventListener() {} }
  t.teardown(() => {
    delete globals.window
    delete globals.document
  })
}

class Stop extends Error {}

/** Reads one stream with fetch-event-source the way its README says; a 204 ends it (no retry). */
async function readWithFetchEventSource(url: string, payload: unknown, cutting: ReturnType<typeof cuttingFetch>) {
  const ids: string[] = []
  const statuses: number[] = []
  await fetchEventSource(url, {
    method: 'POST',
    body: JSON.stringify(payload),
    headers: { 'content-type': 'application/json' },
    openWhenHidden: true,
    fetch: cutting.fetch,
    async onopen(response) {
      statuses.push(response.status)
      if (response.status === 204) throw new Stop()
    },
    onmessage(event) {
      if (event.event === 'message') ids.push(event.id)
    },
    onerror(error) {
      if (error instanceof Stop) throw error
      return 10
    },
  }).catch((error: unknown) => {
    if (!(error instanceof Stop)) throw error
  })
  return { ids, statuses }
}

t.test('fetch-event-source: a dropped non-resumable stream is not run again (204)', async (t) => {
  browserGlobals(t)
  const before = runs.once.length
  const cutting = cuttingFetch(2)
  const { ids, statuses } = await readWithFetchEventSource(`${base}/once`, { n: 3 }, cutting)
  t.same(ids, ['0', '1'])
  t.same(statuses, [200, 204])
  t.same(cutting.seen, [null, '1'])
  t.equal(runs.once.length - before, 1, 'the action ran once')
})

t.test('fetch-event-source: a resumable stream continues from its id', async (t) => {
  browserGlobals(t)
  const before = runs.tail.length
  const cutting = cuttingFetch(2)
  const { ids, statuses } = await readWithFetchEventSource(`${base}/tail`, {}, cutting)
  t.same(ids, ['1', '2', '3', '4', '5', '6'])
  t.same(statuses, [200, 200])
  t.same(runs.tail.slice(before), [undefined, '2'])
})
