import t, { type Test } from 'tap'
import { request as httpRequest } from 'node:http'
import Type from 'typebox'
import { createAction, createService, Err, Ok, messages } from '../lib/index.js'
import { buildServer } from './helpers/server.js'
import { openStream } from './helpers/sse.js'

const finallyRuns: string[] = []
const tick = (ms = 5) => new Promise((resolve) => setTimeout(resolve, ms))

const count = createAction({
  name: 'count',
  description: 'Yields n numbers, returns their sum',
  validation: Type.Object({ n: Type.Integer({ minimum: 0 }) }),
  output: Type.Object({ i: Type.Integer() }),
  handler: async function* (data) {
    let sum = 0
    for (let i = 0; i < data.n; i++) {
      sum += i
      yield { i, secret: 'dropped' } as { i: number }
    }
    return { sum }
  },
})

const endless = createAction({
  name: 'endless',
  description: 'Ticks until closed',
  handler: async function* (_data, context) {
    try {
      for (let i = 0; ; i++) {
        yield i
        await tick(20)
        if (context.signal.aborted) return
      }
    } finally {
      finallyRuns.push('endless')
    }
  },
})

const fails = createAction({
  name: 'fails',
  description: 'Throws after one event',
  handler: async function* () {
    yield 'one'
    throw new Error('went wrong')
  },
})

const refuses = createAction({
  name: 'refuses',
  description: 'Returns Err after one event',
  handler: async function* () {
    yield 1
    return Err('no more')
  },
})

export const streams = createService({ name: 'streams', description: 'streaming actions', actions: [count, endless, fails, refuses] })

t.test('events arrive in order with ids, then the done event with the final envelope', async (t) => {
  const server = await buildServer({ services: [streams], rest: { openapi: { enabled: true, reference: false } } })
  t.teardown(() => server.rest!.app.close())
  await server.rest!.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (server.rest!.app.server.address() as { port: number }).port
  const stream = await openStream(port, '/api/services/streams/count', { n: 3 })
  await stream.ended
  t.equal(stream.status, 200)
  t.equal(stream.headers['content-type'], 'text/event-stream; charset=utf-8')
  t.equal(stream.headers['cache-control'], 'no-cache')
  t.equal(stream.headers['x-accel-buffering'], 'no')
  // An HTTP-date (IMF-fixdate) of the answer, as Node writes on every answer (plugins/sse.ts sets a stream's own).
  t.match(stream.headers.date, /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/)
  t.ok(Math.abs(Date.parse(stream.headers.date!) - Date.now()) < 60_000, 'the Date header is the time of the answer')
  t.equal(stream.response.rawHeaders.filter((name, i) => i % 2 === 0 && name.toLowerCase() === 'date').length, 1, 'one Date header')
  t.same(stream.events.map((e) => [e.id, e.event, e.data]), [
    ['0', 'message', '{"i":0}'],
    ['1', 'message', '{"i":1}'],
    ['2', 'message', '{"i":2}'],
    ['end', 'done', JSON.stringify({ status: true, message: messages.executed('streams', 'count'), data: { sum: 3 } })],
  ])
  t.equal(stream.text().split('\n\n')[0], 'retry: 3000', 'the stream starts with the reconnection delay')
})

/** A fresh server on a real socket; closed at the end of the test. */
async function listen(t: Test, overrides: Parameters<typeof buildServer>[0] = {}) {
  const server = await buildServer({ services: [streams], ...overrides, rest: { openapi: { enabled: true, reference: false }, ...(overrides.rest || {}) } })
  t.teardown(() => server.rest!.app.close())
  await server.rest!.app.listen({ port: 0, host: '127.0.0.1' })
  return { server, port: (server.rest!.app.server.address() as { port: number }).port }
}

const endpoint = (action: string, payload: Record<string, unknown> = {}) => ({ intent: 'execute', service: 'streams', action, payload })

t.test('the one endpoint streams too, for intent execute with Accept: text/event-stream', async (t) => {
  const { port } = await listen(t)
  const stream = await openStream(port, '/api/services', endpoint('count', { n: 2 }), { accept: 'application/json, text/event-stream' })
  await stream.ended
  t.equal(stream.status, 200)
  t.same(stream.events.map((e) => e.data), ['{"i":0}', '{"i":1}', JSON.stringify({ status: true, message: messages.executed('streams', 'count'), data: { sum: 1 } })])
  t.equal(stream.text().split('\n\n')[1], 'id: 0\nevent: message\ndata: {"i":0}', 'the exact wire format of an event')
})

t.test('without Accept: text/event-stream a streaming action answers 406, naming the header', async (t) => {
  const { port, server } = await listen(t)
  const expected = { status: false, message: messages.streamNotAcceptable('streams.count'), data: {} }
  for (const [path, body] of [['/api/services/streams/count', { n: 1 }], ['/api/services', endpoint('count', { n: 1 })]] as const) {
    const answer = await openStream(port, path, body, { accept: 'application/json' })
    await answer.ended
    t.equal(answer.status, 406, path)
    t.same(JSON.parse(answer.text()), expected, path)
  }
  const injected = await server.rest!.app.inject({ method: 'POST', url: '/api/services/streams/count', headers: { accept: 'text/*;q=0' }, payload: { n: 1 } })
  t.equal(injected.statusCode, 406, 'text/*;q=0')
  t.match(expected.message, /Accept: text\/event-stream/)
})

t.test('content negotiation as RFC 9110 has it: no Accept, */* and text/* stream; q-values decide', async (t) => {
  const { port, server } = await listen(t)
  const done = JSON.stringify({ status: true, message: messages.executed('streams', 'count'), data: { sum: 0 } })
  const streamed = async (headers: Record<string, string>) => {
    const response = await server.rest!.app.inject({ method: 'POST', url: '/api/services/streams/count', headers, payload: { n: 1 } })
    return { status: response.statusCode, type: response.headers['content-type'] }
  }
  t.same(await streamed({}), { status: 200, type: 'text/event-stream; charset=utf-8' }, 'no Accept at all: any media type is acceptable')
  for (const accept of ['*/*', 'text/*', 'application/json;q=1, */*;q=0.01', 'text/event-stream;q=0.001', 'TEXT/*']) {
    t.same(await streamed({ accept }), { status: 200, type: 'text/event-stream; charset=utf-8' }, accept)
  }
  for (const accept of ['application/json', '*/*;q=0', 'text/event-stream;q=0, */*', 'text/*;q=0, */*;q=1', 'text/html, application/xhtml+xml']) {
    t.same(await streamed({ accept }), { status: 406, type: 'application/json; charset=utf-8' }, accept)
  }
  // fetch's own default Accept is `*/*`: a plain fetch over a socket reads the events.
  const response = await fetch(`http://127.0.0.1:${port}/api/services/streams/count`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n: 1 }) })
  t.equal(response.status, 200)
  t.equal(await response.text(), `retry: 3000\n\nid: 0\nevent: message\ndata: {"i":0}\n\nid: end\nevent: done\ndata: ${done}\n\n`)
})

t.test('refusals before the first event are JSON envelopes with their usual status', async (t) => {
  const { port } = await listen(t)
  const invalid = await openStream(port, '/api/services/streams/count', { n: -1 })
  await invalid.ended
  t.equal(invalid.status, 400)
  t.equal(invalid.headers['content-type'], 'application/json; charset=utf-8')
  t.match(JSON.parse(invalid.text()), { status: false, message: messages.validationFailed, data: { errors: [{ path: '/n' }] } })
  const unknown = await openStream(port, '/api/services', endpoint('nope'))
  await unknown.ended
  t.equal(unknown.status, 400)
  t.same(JSON.parse(unknown.text()), { status: false, message: messages.actionNotFound('streams', 'nope'), data: {} })
})

t.test('a failure after the stream started is an error event with the envelope a failure answers', async (t) => {
  const { port } = await listen(t)
  const thrown = await openStream(port, '/api/services/streams/fails', {})
  await thrown.ended
  t.same(thrown.events.map((e) => [e.event, e.data]), [
    ['message', '"one"'],
    ['error', JSON.stringify({ status: false, message: 'went wrong', data: {} })],
  ])
  const refused = await openStream(port, '/api/services/streams/refuses', {})
  await refused.ended
  t.same(refused.events.map((e) => [e.event, e.data]), [
    ['message', '1'],
    ['error', JSON.stringify({ status: false, message: 'no more', data: {} })],
  ])
})

t.test("a client that disconnects ends the action: the generator's finally runs within a second", async (t) => {
  const { port } = await listen(t)
  let ran!: () => void
  const finallyRan = new Promise<void>((resolve) => (ran = resolve))
  const before = finallyRuns.length
  const watcher = setInterval(() => finallyRuns.length > before && ran(), 5)
  t.teardown(() => clearInterval(watcher))
  const stream = await openStream(port, '/api/services/streams/endless', {})
  await stream.until((events) => events.length >= 2)
  stream.destroy()
  const outcome = await Promise.race([finallyRan.then(() => 'finally ran'), new Promise((resolve) => setTimeout(resolve, 1000, 'still running after 1 s'))])
  t.equal(outcome, 'finally ran')
})

/** Resolves when the signal aborts. */
const aborted = (signal: AbortSignal) => new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })))

const seen: { reasons: string[]; started: number; afterHooks: number; globalAfter: unknown[] } = { reasons: [], started: 0, afterHooks: 0, globalAfter: [] }

const quiet = createAction({
  name: 'quiet',
  description: 'One event, then silence until aborted',
  timeout: 100,
  handler: async function* (_data, context) {
    try {
      yield 'hello'
      await aborted(context.signal)
      seen.reasons.push((context.signal.reason as Error).message)
    } finally {
      finallyRuns.push('quiet')
    }
  },
})
const idle = createAction({
  name: 'idle',
  description: 'One event, then waits for the end (no timeout)',
  isProtected: true,
  handler: async function* (_data, context) {
    yield { user: context.getAuth()?.userId ?? null }
    await aborted(context.signal)
    seen.reasons.push((context.signal.reason as Error).message)
  },
})
const open = createAction({
  name: 'open',
  description: 'One event, then waits for the end (not protected)',
  handler: async function* (_data, context) {
    yield 'open'
    await aborted(context.signal)
  },
})
const waits = createAction({
  name: 'waits',
  description: 'Not a stream: waits until its signal aborts',
  handler: async (_data, context) => {
    seen.started++
    await aborted(context.signal)
    seen.reasons.push((context.signal.reason as Error).message)
    return Ok({ aborted: true })
  },
})
const slow = createAction({
  name: 'slow',
  description: 'Not a stream: times out, its signal aborts',
  timeout: 50,
  handler: async (_data, context) => {
    await aborted(context.signal)
    seen.reasons.push((context.signal.reason as Error).message)
    return Ok({})
  },
})
const upper = createAction({ name: 'upper', description: 'before hook', handler: (data: Record<string, unknown>) => Ok({ ...data, n: Number(data.n) + 1 }) })
const gate = createAction({ name: 'gate', description: 'critical before hook that refuses', handler: () => Err('gate closed') })
const wrapFinal = createAction({
  name: 'wrapFinal',
  description: 'after hook',
  handler: (data: Record<string, unknown>) => {
    seen.afterHooks++
    return Ok({ ...data, wrapped: true })
  },
})
const hooked = createAction({
  name: 'hooked',
  description: 'Streams with hooks around it',
  validation: Type.Object({ n: Type.Integer() }),
  hooks: { before: [{ service: 'more', action: 'upper', isCritical: true }], after: [{ service: 'more', action: 'wrapFinal', isCritical: true }] },
  handler: async function* (data) {
    for (let i = 0; i < data.n; i++) yield i
    return { n: data.n }
  },
})
const gated = createAction({
  name: 'gated',
  description: 'A critical before hook refuses',
  hooks: { before: [{ service: 'more', action: 'gate', isCritical: true }] },
  handler: async function* () {
    yield 'never'
  },
})
const more = createService({ name: 'more', description: 'more', actions: [quiet, idle, open, waits, slow, upper, gate, wrapFinal, hooked, gated] })
const moreRoute = (action: string) => `/api/services/more/${action}`

t.test('the per-action timeout is the longest silence: an error event, the signal aborts, finally runs', async (t) => {
  const { port } = await listen(t, { services: [streams, more] })
  seen.reasons.length = 0
  const stream = await openStream(port, moreRoute('quiet'), {})
  await stream.ended
  t.same(stream.events.map((e) => [e.event, e.data]), [
    ['message', '"hello"'],
    ['error', JSON.stringify({ status: false, message: messages.actionTimedOut('more.quiet', 100), data: {} })],
  ])
  t.same(seen.reasons, ['Action aborted: no answer within 100ms'])
  t.ok(finallyRuns.includes('quiet'))
})

t.test('keep-alive comments on a silent stream; maxDuration ends it with an error event', async (t) => {
  const { port } = await listen(t, { services: [streams, more], rest: { streams: { keepAlive: 20, maxDuration: 300 } } })
  const stream = await openStream(port, moreRoute('open'), {})
  await stream.ended
  t.ok(stream.comments.filter((comment) => comment.trim() === 'keep-alive').length >= 2, 'keep-alive comments arrived')
  t.match(stream.text(), /: keep-alive\n\n/)
  t.same(stream.events.map((e) => [e.event, e.data]), [
    ['message', '"open"'],
    ['error', JSON.stringify({ status: false, message: messages.streamDuration('more.open', 300), data: {} })],
  ])
})

t.test('shutdown ends open streams with an error event and close() does not hang', async (t) => {
  const { server, port } = await listen(t, { services: [streams, more] })
  const streamsOpen = await Promise.all([openStream(port, moreRoute('open'), {}), openStream(port, '/api/services/streams/endless', {})])
  await Promise.all(streamsOpen.map((stream) => stream.until((events) => events.length >= 1)))
  await server.rest!.app.close()
  for (const stream of streamsOpen) {
    await stream.ended
    const last = stream.events.at(-1)!
    t.equal(last.event, 'error')
    t.same(JSON.parse(last.data), { status: false, message: messages.shuttingDown, data: {} })
  }
})

t.test('context.signal of an ordinary action: aborts on disconnect and on its timeout', async (t) => {
  const { server, port } = await listen(t, { services: [streams, more] })
  seen.reasons.length = 0
  const timedOut = await server.rest!.app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'execute', service: 'more', action: 'slow', payload: {} } })
  t.equal(timedOut.statusCode, 504)
  t.same(seen.reasons, ['Action aborted: no answer within 50ms'])
  seen.reasons.length = 0
  seen.started = 0
  const call = httpRequest({ host: '127.0.0.1', port, path: '/api/services', method: 'POST', headers: { 'content-type': 'application/json' } })
  call.on('error', () => undefined)
  call.end(JSON.stringify({ intent: 'execute', service: 'more', action: 'waits', payload: {} }))
  while (seen.started === 0) await tick()
  call.destroy()
  while (seen.reasons.length === 0) await tick()
  t.same(seen.reasons, ['Action aborted: the client disconnected'])
})

t.test('auth and CSRF refuse before the first byte, as JSON; a valid token streams', async (t) => {
  const secret = 'a-long-random-secret-for-the-streams-test'
  const { server, port } = await listen(t, { services: [streams, more], auth: { secret, method: 'both' }, rest: { allowedOrigins: ['https://app.example'] } })
  const jwt = (await import('../lib/index.js')).getActions(server.rest!.app).jwt!
  const missing = await openStream(port, moreRoute('idle'), {})
  await missing.ended
  t.equal(missing.status, 401)
  t.same(JSON.parse(missing.text()), { status: false, message: messages.authFailed(messages.authReasons.missingToken), data: {} })
  const crossSite = await openStream(port, moreRoute('idle'), {}, { accept: 'text/event-stream', cookie: `auth_token=${jwt.sign({ sub: 'victim' })}`, origin: 'https://evil.example' })
  await crossSite.ended
  t.equal(crossSite.status, 401)
  t.same(JSON.parse(crossSite.text()), { status: false, message: messages.authFailed(messages.authReasons.crossSite), data: {} })
  const signed = await openStream(port, moreRoute('idle'), {}, { accept: 'text/event-stream', authorization: `Bearer ${jwt.sign({ sub: 'ada' })}` })
  const [first] = await signed.until((events) => events.length >= 1)
  t.equal(signed.status, 200)
  t.same(JSON.parse(first!.data), { user: 'ada' })
  signed.destroy()
})

t.test('rate limiting counts a stream once, however many events it sends', async (t) => {
  const { port } = await listen(t, { services: [streams, more], rest: { rateLimiting: { limitingHeader: 'x-client', limit: 2 } } })
  const headers = { accept: 'text/event-stream', 'x-client': 'a' }
  const long = await openStream(port, '/api/services/streams/count', { n: 50 }, headers)
  await long.ended
  t.equal(long.events.length, 51, '50 events and the done event')
  const second = await openStream(port, '/api/services/streams/count', { n: 1 }, headers)
  await second.ended
  t.equal(second.status, 200, 'the second request of the window')
  const third = await openStream(port, '/api/services/streams/count', { n: 1 }, headers)
  await third.ended
  t.equal(third.status, 429)
  t.match(JSON.parse(third.text()), { status: false, message: /^Rate limit exceeded, retry in \d+ seconds$/, data: {} })
})

t.test('maxPerClient bounds the open streams of one client key (the rate limiter\'s)', async (t) => {
  const { port } = await listen(t, { services: [streams, more], rest: { rateLimiting: { limitingHeader: 'x-client', limit: 1000 }, streams: { maxPerClient: 1 } } })
  const as = (client: string) => ({ accept: 'text/event-stream', 'x-client': client })
  const first = await openStream(port, moreRoute('open'), {}, as('a'))
  await first.until((events) => events.length >= 1)
  t.equal(first.status, 200)
  const second = await openStream(port, moreRoute('open'), {}, as('a'))
  await second.ended
  t.equal(second.status, 429)
  t.same(JSON.parse(second.text()), { status: false, message: messages.tooManyStreams(1), data: { maxPerClient: 1 } })
  const other = await openStream(port, '/api/services/streams/count', { n: 1 }, as('b'))
  await other.ended
  t.equal(other.status, 200, 'another client key is not counted against the first')
  first.destroy()
  // The slot is free once the server has seen the first stream close.
  let again = await openStream(port, '/api/services/streams/count', { n: 1 }, as('a'))
  while (again.status === 429) {
    await tick()
    again = await openStream(port, '/api/services/streams/count', { n: 1 }, as('a'))
  }
  await again.ended
  t.equal(again.status, 200)
})

t.test('hooks: before hooks run before the first byte, after hooks and the global after handler once at the end', async (t) => {
  seen.afterHooks = 0
  seen.globalAfter.length = 0
  const { port } = await listen(t, {
    services: [streams, more],
    onAfterActionHandler: ({ action, result }) => {
      seen.globalAfter.push([action.name, result])
      return result
    },
  })
  const stream = await openStream(port, moreRoute('hooked'), { n: 1 })
  await stream.ended
  t.same(stream.events.map((e) => [e.event, e.data]), [
    ['message', '0'],
    ['message', '1'],
    ['done', JSON.stringify({ status: true, message: messages.executed('more', 'hooked'), data: { n: 2, wrapped: true } })],
  ], 'the before hook added one to n; the after hook wrapped the final value')
  t.equal(seen.afterHooks, 1)
  t.same(seen.globalAfter, [['hooked', { ok: true, value: { n: 2, wrapped: true } }]])
  const refused = await openStream(port, moreRoute('gated'), {})
  await refused.ended
  t.equal(refused.status, 400)
  t.same(JSON.parse(refused.text()), { status: false, message: messages.hookFailed('more.gate', 'gate closed'), data: {} })
})

t.test('an event its output schema cannot write ends the stream with the 500 envelope, logged, nothing leaked', async (t) => {
  const bad = createAction({
    name: 'bad',
    description: 'Yields a value its schema refuses',
    output: Type.Object({ n: Type.Integer() }),
    handler: async function* () {
      yield { n: 1 }
      yield { n: 'secret text' } as unknown as { n: number }
    },
  })
  const { port } = await listen(t, { services: [createService({ name: 'odd', description: '', actions: [bad] })] })
  const stream = await openStream(port, '/api/services/odd/bad', {})
  await stream.ended
  t.same(stream.events.map((e) => [e.event, e.data]), [
    ['message', '{"n":1}'],
    ['error', JSON.stringify({ status: false, message: messages.internal, data: {} })],
  ])
  t.notMatch(stream.text(), /secret text/)
})

t.test('a streaming action cannot be a hook: refused at boot', async (t) => {
  const user = createAction({ name: 'user', description: '', hooks: { before: [{ service: 'streams', action: 'count', isCritical: true }] }, handler: () => Ok({}) })
  await t.rejects(buildServer({ services: [streams, createService({ name: 'other', description: '', actions: [user] })] }), { code: 'FA_ERR_CONFIG', message: messages.streamAsHook('streams.count', 'other.user') })
})

t.test("a streaming action's name follows the action name rule: refused at boot", async (t) => {
  const bad = createAction({
    name: 'tick/../x',
    description: 'A name that is no path segment',
    handler: async function* () {
      yield 1
    },
  })
  await t.rejects(buildServer({ services: [createService({ name: 'named', description: '', actions: [bad] })] }), { code: 'FA_ERR_CONFIG', message: messages.invalidActionName('tick/../x', 'named') })
})

t.test('app.inject reads a whole finite stream (tests need no socket)', async (t) => {
  const server = await buildServer({ services: [streams] })
  t.teardown(() => server.close())
  const response = await server.app.inject({ method: 'POST', url: '/api/services', headers: { accept: 'text/event-stream' }, payload: endpoint('count', { n: 1 }) })
  t.equal(response.statusCode, 200)
  t.equal(response.headers['content-type'], 'text/event-stream; charset=utf-8')
  t.equal(response.body, `retry: 3000\n\nid: 0\nevent: message\ndata: {"i":0}\n\nid: end\nevent: done\ndata: ${JSON.stringify({ status: true, message: messages.executed('streams', 'count'), data: { sum: 0 } })}\n\n`)
})
