import t from 'tap'
import type { Socket } from 'node:net'
import { messages } from '../../lib/index.js'
import { clientErrorCodes, clientMessages, createClient, isErr, isOk, type ClientResult, type FetchLike } from '../../lib/client/index.js'
import { freePort } from '../helpers/redis.js'
import type { TapTest } from '../helpers/postgres.js'
import { clientServer, DISCOVERY_SECRET, listen, type Services } from './fixtures.js'

// The same calls through a real socket (global fetch) and in-process (app.fetch): every result kind.

const empty = {}

const sockets: Socket[] = []

async function setup(t: TapTest, transport: 'socket' | 'app.fetch') {
  const server = await clientServer()
  t.teardown(async () => {
    // undici may keep a connection it opened for a call aborted before it was written: it never sends
    // a byte, and server.close() waits for such a connection (reported to the lead, not the client's
    // concern). This test is about the client, so those are closed here.
    for (const socket of sockets) if (socket.bytesRead === 0) socket.destroy()
    await server.close()
  })
  // Endpoints that answer what a fastify-actions server never does.
  server.app.post('/text/services', (_request, reply) => reply.type('text/html').send('<h1>Bad gateway</h1>'))
  server.app.post('/plain/services', (_request, reply) => reply.code(502).send({ error: 'upstream down' }))
  if (transport === 'socket') {
    const baseUrl = await listen(server.app)
    server.app.server.on('connection', (socket) => sockets.push(socket))
    return { server, baseUrl, origin: baseUrl.replace(/\/api$/, ''), fetch: undefined as FetchLike | undefined }
  }
  return { server, baseUrl: 'http://localhost/api', origin: 'http://localhost', fetch: server.app.fetch as FetchLike }
}

function errOf<T>(t: { fail: (message: string) => void }, result: ClientResult<T>) {
  if (isOk(result)) {
    t.fail(`expected an Err, got Ok(${JSON.stringify(result.value)})`)
    return undefined as never
  }
  return result.error
}

for (const transport of ['socket', 'app.fetch'] as const) {
  t.test(`over ${transport}`, async (t) => {
    const { server, baseUrl, origin, fetch } = await setup(t, transport)
    const client = createClient<Services>({ baseUrl, fetch, discoverySecret: DISCOVERY_SECRET })

    t.test('Ok: an object as sent, a primitive or array unwrapped from data.result', async (t) => {
      t.same(await client.calc.add({ a: 2, b: 3 }), { ok: true, value: { sum: 5 } })
      t.same(await client.calc.answer(), { ok: true, value: 42 })
      t.same(await client.calc.letters(), { ok: true, value: ['a', 'b'] })
      t.same(await client.invoke('calc', 'add', { a: 1, b: 1 }), { ok: true, value: { sum: 2 } })
      t.same(await client.invoke('calc', 'hidden'), { ok: true, value: { hidden: true } }, 'a hidden action still executes through invoke')
    })

    t.test('Err from the envelope: status, message, data and the HTTP status', async (t) => {
      const refused = await client.calc.refuse()
      t.ok(isErr(refused))
      t.same(refused, { ok: false, error: { status: false, message: 'refused on purpose', data: empty, httpStatus: 400 } })
      // @ts-expect-error a wrong field reaches the server when the types are bypassed
      const invalid = await client.calc.add({ a: 1, c: 2 })
      t.same(invalid, {
        ok: false,
        error: {
          status: false,
          message: messages.validationFailed,
          data: {
            errors: [
              { path: '', message: 'must have required properties b' },
              { path: '', message: "must not have additional properties: 'c'" },
            ],
          },
          httpStatus: 400,
        },
      })
      t.same(await client.invoke('nope', 'x'), { ok: false, error: { status: false, message: messages.serviceNotFound('nope'), data: empty, httpStatus: 400 } })
    })

    t.test('401 from a protected action without a token', async (t) => {
      t.same(await client.account.me(), {
        ok: false,
        error: { status: false, message: messages.authFailed(messages.authReasons.missingToken), data: empty, httpStatus: 401 },
      })
    })

    t.test('explore and schema: the secret from the client, per call, or missing (403)', async (t) => {
      const explored = await client.explore()
      t.ok(explored.ok)
      const names = explored.ok ? (explored.value.services as Array<{ name: string; actions: string[] }>).map((s) => [s.name, s.actions]) : []
      t.same(names, [
        ['calc', ['add', 'answer', 'letters', 'refuse', 'slow', 'headers']],
        ['account', ['me', 'login']],
        ['docs', ['attach', 'single']],
      ])
      const schema = await client.schema('calc', 'add')
      t.same(schema.ok && schema.value, {
        add: { type: 'object', additionalProperties: false, required: ['a', 'b'], properties: { a: { type: 'integer' }, b: { type: 'integer' } } },
      })
      const anonymous = createClient({ baseUrl, fetch })
      t.same(await anonymous.explore('*'), {
        ok: false,
        error: { status: false, message: messages.discoverySecret, data: empty, httpStatus: 403 },
      })
      t.same(await anonymous.schema('*', '*', { discoverySecret: 'wrong' }), {
        ok: false,
        error: { status: false, message: messages.discoverySecret, data: empty, httpStatus: 403 },
      })
      const actions = await anonymous.explore('calc', '*', { discoverySecret: DISCOVERY_SECRET })
      t.equal(actions.ok && (actions.value.actions as unknown[]).length, 6)
    })

    t.test('404: a base URL that is not the API', async (t) => {
      const lost = createClient({ baseUrl: `${origin}/nope`, fetch })
      t.same(await lost.invoke('calc', 'add', { a: 1, b: 2 }), {
        ok: false,
        error: { status: false, message: messages.routeNotFound('/api'), data: empty, httpStatus: 404 },
      })
    })

    t.test('an answer that is not JSON, and JSON that is not an envelope', async (t) => {
      const html = errOf(t, await createClient({ baseUrl: `${origin}/text`, fetch }).invoke('a', 'b'))
      t.same(html, {
        status: false,
        message: clientMessages.notJson(200),
        data: empty,
        httpStatus: 200,
        code: clientErrorCodes.badResponse,
        cause: '<h1>Bad gateway</h1>',
      })
      const plain = errOf(t, await createClient({ baseUrl: `${origin}/plain`, fetch }).invoke('a', 'b'))
      t.same(plain, {
        status: false,
        message: clientMessages.notEnvelope(502),
        data: empty,
        httpStatus: 502,
        code: clientErrorCodes.badResponse,
        cause: { error: 'upstream down' },
      })
    })

    t.test('timeout: per call and by default, the same in-process as over a socket', async (t) => {
      let started = Date.now()
      const late = errOf(t, await client.calc.slow({ ms: 1000 }, { timeout: 50 }))
      t.same(late, { status: false, message: clientMessages.timeout(50), data: empty, httpStatus: 0, code: clientErrorCodes.timeout })
      t.ok(Date.now() - started < 900, 'the client did not wait for the answer')
      const impatient = createClient<Services>({ baseUrl, fetch, timeout: 40 })
      started = Date.now()
      t.equal(errOf(t, await impatient.calc.slow({ ms: 1000 })).code, clientErrorCodes.timeout)
      t.same(await impatient.calc.slow({ ms: 0 }, { timeout: 0 }), { ok: true, value: { waited: 0 } }, 'timeout 0 per call: none')
      t.same(await impatient.calc.slow({ ms: 10 }, { timeout: 2000 }), { ok: true, value: { waited: 10 } }, 'a per-call timeout overrides the default')
    })

    t.test('abort: a per-call signal, a default signal, an already aborted one', async (t) => {
      const controller = new AbortController()
      const reason = new Error('user left the page')
      setTimeout(() => controller.abort(reason), 30)
      const started = Date.now()
      const aborted = errOf(t, await client.calc.slow({ ms: 1000 }, { signal: controller.signal }))
      t.same(aborted, { status: false, message: clientMessages.aborted, data: empty, httpStatus: 0, code: clientErrorCodes.aborted, cause: reason })
      t.ok(Date.now() - started < 900)
      const pre = errOf(t, await client.calc.add({ a: 1, b: 1 }, { signal: AbortSignal.abort('gone') }))
      t.same(pre, { status: false, message: clientMessages.aborted, data: empty, httpStatus: 0, code: clientErrorCodes.aborted, cause: 'gone' })
      const shared = new AbortController()
      const scoped = createClient<Services>({ baseUrl, fetch, signal: shared.signal })
      t.same(await scoped.calc.answer(), { ok: true, value: 42 })
      shared.abort()
      t.equal(errOf(t, await scoped.calc.answer()).code, clientErrorCodes.aborted)
    })

    t.test('headers: defaults, per call, and Content-Type always the client\'s', async (t) => {
      const headed = createClient<Services>({ baseUrl, fetch, headers: { 'x-custom': 'default' } })
      t.same(await headed.calc.headers(), { ok: true, value: { contentType: 'application/json', custom: 'default', authorization: null } })
      t.same(await headed.calc.headers({}, { headers: { 'x-custom': 'per-call', 'content-type': 'text/plain' } }), {
        ok: true,
        value: { contentType: 'application/json', custom: 'per-call', authorization: null },
      })
    })

    t.test('await client and JSON.stringify(client) send nothing', async (t) => {
      let calls = 0
      const counting: FetchLike = (input, init) => {
        calls++
        return (fetch ?? globalThis.fetch)(input, init)
      }
      const probe = createClient<Services>({ baseUrl, fetch: counting })
      t.equal(await probe, probe)
      t.equal(await probe.calc, probe.calc)
      t.equal(JSON.stringify(probe), '{}')
      t.equal((probe as unknown as Record<symbol, unknown>)[Symbol.iterator], undefined)
      t.equal(calls, 0)
      t.equal(probe.calc.add, probe.calc.add, 'a method is made once')
    })

    void server
  })
}

t.test('nothing throws: a payload that is not JSON, a fetch that throws synchronously', async (t) => {
  let calls = 0
  const client = createClient({ baseUrl: '/api', fetch: () => {
    calls++
    throw new TypeError('bad init')
  } })
  const cyclic: Record<string, unknown> = {}
  cyclic.self = cyclic
  t.match(await client.invoke('a', 'b', { big: 1n }), { ok: false, error: { code: clientErrorCodes.badInput, httpStatus: 0, message: /^the payload cannot be sent as JSON: / } })
  t.match(await client.invoke('a', 'b', cyclic), { ok: false, error: { code: clientErrorCodes.badInput, message: /^the payload cannot be sent as JSON: / } })
  t.equal(calls, 0, 'nothing was sent')
  t.same(await client.invoke('a', 'b'), { ok: false, error: { status: false, message: clientMessages.network('bad init'), data: empty, httpStatus: 0, code: clientErrorCodes.network, cause: new TypeError('bad init') } })
})

t.test('network failure: a closed port, and a fetch that rejects', async (t) => {
  const port = await freePort()
  const client = createClient({ baseUrl: `http://127.0.0.1:${port}/api` })
  const refused = await client.invoke('calc', 'answer')
  t.match(refused, { ok: false, error: { status: false, data: empty, httpStatus: 0, code: clientErrorCodes.network, message: /^The request failed: / } })
  const broken = createClient({ baseUrl: '/api', fetch: () => Promise.reject(new TypeError('Failed to fetch')) })
  t.same(await broken.invoke('a', 'b'), {
    ok: false,
    error: { status: false, message: clientMessages.network('Failed to fetch'), data: empty, httpStatus: 0, code: clientErrorCodes.network, cause: new TypeError('Failed to fetch') },
  })
})
