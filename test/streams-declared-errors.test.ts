/**
 * Streams meet declared errors (issues 27 and 28): a streaming action may declare `errors`; a `Fail`
 * before the stream is the JSON answer any action gives (its status, `data: { code, ...data }`), and a
 * `Fail` that ends a started stream is its `error` event with that same envelope, written through the
 * declared data schema. The typed client's StreamError carries the code, MCP's result carries it too.
 */
import t, { type Test } from 'tap'
import Type from 'typebox'
import { createAction, createService, createServices, Fail, messages, Ok } from '../lib/index.js'
import { createClient, isDeclaredError, isOk, StreamError } from '../lib/client/index.js'
import { buildServer } from './helpers/server.js'
import { openStream } from './helpers/sse.js'
import { connectClient, startMcpServer } from './helpers/mcp.js'

const errors = {
  QUOTA: { status: 429, message: 'Quota reached', data: Type.Object({ left: Type.Integer() }) },
  GONE: { status: 410 },
}

const metered = createAction({
  name: 'metered',
  description: 'Yields `give` events, then fails with QUOTA (or GONE, or an undeclared code, or data off its schema)',
  validation: Type.Object({ give: Type.Integer({ minimum: 0 }), end: Type.Optional(Type.String()) }),
  errors,
  handler: async function* (data) {
    for (let i = 0; i < data.give; i++) yield { i }
    if (data.end === 'gone') return Fail('GONE')
    if (data.end === 'ok') return Ok({ given: data.give })
    // Off the declarations at run time (the types would refuse both): what the engine does with them.
    if (data.end === 'undeclared') return Fail('OTHER' as 'GONE')
    if (data.end === 'mismatch') return Fail('QUOTA', { left: 'many' as unknown as number })
    return Fail('QUOTA', { left: 0, secret: 'not declared' } as { left: number })
  },
})

// A plain function that refuses before any event: the stream never starts.
const refusesFirst = createAction({
  name: 'refusesFirst',
  description: 'Refuses with QUOTA before the stream starts',
  stream: true,
  errors,
  handler: () => Fail('QUOTA', { left: 0 }) as never,
})

// The same failure from an ordinary action, for the envelope to compare with.
const plain = createAction({ name: 'plain', description: 'Fails with QUOTA', errors, handler: () => Fail('QUOTA', { left: 0 }) })

const meter = createService({ name: 'meter', description: 'Declared errors on streams', actions: [metered, refusesFirst, plain] })
const services = createServices([meter])

const quota = { status: false, message: 'Quota reached', data: { code: 'QUOTA', left: 0 } }

async function listening(t: Test) {
  const server = await buildServer({ services, rest: { openapi: { enabled: false, actionRoutes: true } } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  return { server, port: (server.app.server.address() as { port: number }).port }
}

t.test('a Fail that ends a stream is its error event, with the envelope the same failure answers as JSON', async (t) => {
  const { port } = await listening(t)
  const json = await fetch(`http://127.0.0.1:${port}/api/services/meter/plain`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  t.equal(json.status, 429)
  const asJson = await json.json()
  t.same(asJson, quota)

  for (const path of ['/api/services/meter/metered', '/api/services']) {
    const body = path === '/api/services' ? { intent: 'execute', service: 'meter', action: 'metered', payload: { give: 2 } } : { give: 2 }
    const stream = await openStream(port, path, body)
    await stream.ended
    t.equal(stream.status, 200, `${path}: the stream started`)
    t.same(
      stream.events.map((event) => [event.event, event.data]),
      [
        ['message', '{"i":0}'],
        ['message', '{"i":1}'],
        ['error', JSON.stringify(asJson)],
      ],
      `${path}: the error event carries { code, ...data } through the declared schema (the undeclared field dropped)`,
    )
  }
})

t.test('a declaration without data, an undeclared code, data off its schema', async (t) => {
  const { port } = await listening(t)
  const lastOf = async (end: string) => {
    const stream = await openStream(port, '/api/services/meter/metered', { give: 1, end })
    await stream.ended
    const last = stream.events.at(-1)!
    t.equal(last.event, 'error', `${end}: an error event`)
    return JSON.parse(last.data)
  }
  t.same(await lastOf('gone'), { status: false, message: 'GONE', data: { code: 'GONE' } })
  t.same(await lastOf('undeclared'), { status: false, message: 'OTHER', data: {} }, 'an undeclared code: a plain Err (logged), no code')
  const mismatch = await lastOf('mismatch')
  t.same(mismatch, { status: false, message: messages.internal, data: {} }, 'data off its schema: the 500 envelope, nothing of the data leaks')
})

t.test('a Fail before the stream starts is the JSON refusal, not a stream', async (t) => {
  const { port } = await listening(t)
  const stream = await openStream(port, '/api/services/meter/refusesFirst', {})
  await stream.ended
  t.equal(stream.status, 429)
  t.match(stream.headers['content-type'], /^application\/json/)
  t.same(JSON.parse(stream.text()), quota)
})

t.test('the typed client: the loop throws a StreamError with the declared code and data; final is the same Err', async (t) => {
  const { port } = await listening(t)
  const client = createClient<typeof services>({ baseUrl: `http://127.0.0.1:${port}/api` })
  const opened = await client.meter.metered({ give: 1 })
  if (!isOk(opened)) throw new Error(opened.error.message)
  const events: unknown[] = []
  let caught: unknown
  try {
    for await (const event of opened.value) events.push(event)
  } catch (error) {
    caught = error
  }
  t.same(events, [{ i: 0 }])
  t.ok(caught instanceof StreamError)
  const error = caught as StreamError
  t.equal(error.code, 'QUOTA')
  t.same(error.data, { code: 'QUOTA', left: 0 })
  t.equal(error.message, 'Quota reached')
  t.ok(isDeclaredError(error), 'isDeclaredError tells it from a transport or framework failure')
  const final = await opened.value.final
  t.equal(final.ok, false)
  if (!final.ok) {
    t.equal(final.error.code, 'QUOTA')
    // The final Err is typed with the action's declared errors: `code` narrows `data`.
    if (final.error.code === 'QUOTA') t.equal(final.error.data.left, 0)
  }

  const refused = await client.meter.refusesFirst()
  t.equal(refused.ok, false, 'a refusal before the stream is an Err of the call')
  if (!refused.ok) t.match(refused.error, { code: 'QUOTA', httpStatus: 429, data: { code: 'QUOTA', left: 0 } })
})

t.test('MCP: a stream that ends with a Fail is isError with its message, { code, ...data }, then the events', async (t) => {
  const server = await startMcpServer(t, { services })
  const client = await connectClient(t, server.url)
  const result = await client.callTool({ name: 'meter_metered', arguments: { give: 1 } })
  t.same(result, {
    isError: true,
    content: [
      { type: 'text', text: 'Quota reached' },
      { type: 'text', text: '{"code":"QUOTA","left":0}' },
      { type: 'text', text: '{"events":[{"i":0}]}' },
    ],
  })
})

t.test("OpenAPI: the stream's error event lists the declared envelopes; explore lists its errors and says it streams", async (t) => {
  const server = await buildServer({ services, rest: { openapi: { enabled: true, reference: false } } })
  t.teardown(() => server.close())
  const document = (await server.app.inject({ method: 'GET', url: '/api/openapi.json' })).json()
  const operation = document.paths['/api/services/meter/metered'].post
  const events = operation.responses['200'].content['text/event-stream']['x-events']
  t.same(events.error.anyOf[0], { $ref: '#/components/schemas/ErrorEnvelope' })
  t.same(
    events.error.anyOf.slice(1).map((envelope: { properties: { data: { properties: { code: unknown } } } }) => envelope.properties.data.properties.code),
    [
      { type: 'string', const: 'QUOTA' },
      { type: 'string', const: 'GONE' },
    ],
  )
  t.ok(operation.responses['429'], 'the declared 429 is a response of the route too')
  t.ok(operation.responses['410'])
  const explored = await server.app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'explore', service: 'meter', action: 'metered', payload: {} } })
  t.match(explored.json().data, { stream: true, errors: { QUOTA: { status: 429, message: 'Quota reached' }, GONE: { status: 410, message: 'GONE' } } })
})
