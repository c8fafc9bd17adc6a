import t from 'tap'
import { request as httpRequest } from 'node:http'
import { createAction, createServer, messages, Ok } from '../lib/index.js'
import { buildServer } from './helpers/server.js'
import { paymentService, type Ledger } from './helpers/idempotency.js'

/** A subtest's `t`. */
type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

async function serve(t: Tap, rest: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const ledger: Ledger = { runs: {} }
  const server = await buildServer({ services: [paymentService(ledger)], rest: { openapi: { enabled: true, public: true }, ...rest }, ...extra })
  t.teardown(() => server.close())
  return { ledger, app: server.app }
}

type Send = { action?: string; payload?: unknown; key?: string; headers?: Record<string, string>; route?: boolean }

/** An execute on the endpoint, or (with `route`) on the per-action route; the key as the Idempotency-Key header. */
async function send(app: Awaited<ReturnType<typeof serve>>['app'], { action = 'charge', payload = { amount: 10 }, key, headers = {}, route = false }: Send) {
  const response = await app.inject({
    method: 'POST',
    url: route ? `/api/services/pay/${action}` : '/api/services',
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }), ...headers },
    payload: JSON.stringify(route ? payload : { intent: 'execute', service: 'pay', action, payload }),
  })
  return { status: response.statusCode, headers: response.headers, body: response.json(), raw: response.body }
}

for (const route of [false, true]) {
  const where = route ? 'per-action route' : 'endpoint'

  t.test(`${where}: a required action without a key is a 400 naming the header; the handler does not run`, async (t) => {
    const { app, ledger } = await serve(t)
    const answer = await send(app, { route })
    t.equal(answer.status, 400)
    t.same(answer.body, { status: false, message: messages.idempotencyKeyRequired('pay.charge'), data: { header: 'Idempotency-Key' } })
    t.equal(ledger.runs.charge, undefined)
    for (const bad of ['', 'a b', 'é', 'x'.repeat(256)]) {
      const refused = await send(app, { route, key: bad })
      t.equal(refused.status, 400, JSON.stringify(bad))
      t.same(refused.body, { status: false, message: messages.idempotencyKeyInvalid, data: { header: 'Idempotency-Key' } })
    }
    t.equal(ledger.runs.charge, undefined)
    t.equal((await send(app, { route, key: '~'.repeat(255) })).status, 200, '255 visible characters are a key')
  })

  t.test(`${where}: a repeat replays the stored answer with Idempotent-Replayed; key order does not matter`, async (t) => {
    const { app, ledger } = await serve(t)
    const first = await send(app, { route, key: 'k-1', payload: { amount: 10, currency: 'EUR' } })
    t.equal(first.status, 200)
    t.same(first.body.data, { id: 'ch_1', amount: 10 })
    t.equal(first.headers['idempotent-replayed'], undefined)
    const again = await send(app, { route, key: 'k-1', payload: { currency: 'EUR', amount: 10 } })
    t.equal(again.status, 200)
    t.equal(again.raw, first.raw, 'the very same body')
    t.equal(again.headers['idempotent-replayed'], 'true')
    t.match(again.headers['content-type'], /^application\/json/)
    t.equal(ledger.runs.charge, 1)
    // Another key runs again.
    t.same((await send(app, { route, key: 'k-2' })).body.data, { id: 'ch_2', amount: 10 })
    t.equal(ledger.runs.charge, 2)
  })

  t.test(`${where}: the same key with another input is a 422; the handler does not run`, async (t) => {
    const { app, ledger } = await serve(t)
    await send(app, { route, key: 'k', payload: { amount: 10 } })
    const other = await send(app, { route, key: 'k', payload: { amount: 11 } })
    t.equal(other.status, 422)
    t.same(other.body, { status: false, message: messages.idempotencyKeyReused, data: {} })
    // The same key on another action is another request too.
    const elsewhere = await send(app, { route, key: 'k', action: 'note', payload: { amount: 10 } })
    t.equal(elsewhere.status, 422)
    t.equal(ledger.runs.charge, 1)
    t.equal(ledger.runs.note, undefined)
  })

  t.test(`${where}: the same key while the first still runs is a 409`, async (t) => {
    const { app, ledger } = await serve(t)
    let open!: () => void
    ledger.gate = new Promise((resolve) => (open = resolve))
    const started = new Promise<void>((resolve) => (ledger.started = resolve))
    const first = send(app, { route, key: 'busy' })
    await started
    const second = await send(app, { route, key: 'busy' })
    t.equal(second.status, 409)
    t.same(second.body, { status: false, message: messages.idempotencyInFlight, data: {} })
    open()
    t.equal((await first).status, 200)
    t.equal(ledger.runs.charge, 1)
    t.equal((await send(app, { route, key: 'busy' })).headers['idempotent-replayed'], 'true')
    t.equal(ledger.runs.charge, 1)
  })

  t.test(`${where}: an Err (400) and a declared error (402) are stored and replayed`, async (t) => {
    const { app, ledger } = await serve(t)
    const refused = await send(app, { route, key: 'r', action: 'refuse' })
    t.equal(refused.status, 400)
    t.same(refused.body, { status: false, message: 'refused 1', data: {} })
    const replayed = await send(app, { route, key: 'r', action: 'refuse' })
    t.equal(replayed.raw, refused.raw)
    t.equal(replayed.status, 400)
    t.equal(replayed.headers['idempotent-replayed'], 'true')
    const declined = await send(app, { route, key: 'd', action: 'declined' })
    t.equal(declined.status, 402)
    const again = await send(app, { route, key: 'd', action: 'declined' })
    t.equal(again.status, 402)
    t.equal(again.raw, declined.raw)
    t.same(ledger.runs, { refuse: 1, declined: 1 })
  })

  t.test(`${where}: a 5xx (a timeout) is not stored: the retry runs`, async (t) => {
    const { app, ledger } = await serve(t)
    t.equal((await send(app, { route, key: 't', action: 'slow' })).status, 504)
    t.equal((await send(app, { route, key: 't', action: 'slow' })).status, 504)
    t.equal(ledger.runs.slow, 2)
  })

  t.test(`${where}: an optional action runs every time without a key, once with one`, async (t) => {
    const { app, ledger } = await serve(t)
    await send(app, { route, action: 'note' })
    await send(app, { route, action: 'note' })
    t.equal(ledger.runs.note, 2)
    const keyed = await send(app, { route, action: 'note', key: 'n' })
    t.same(keyed.body.data, { run: 3 })
    t.same((await send(app, { route, action: 'note', key: 'n' })).body.data, { run: 3 })
    t.equal(ledger.runs.note, 3)
    // An action without idempotency ignores the header.
    await send(app, { route, action: 'plain', key: 'p' })
    await send(app, { route, action: 'plain', key: 'p' })
    t.equal(ledger.runs.plain, 2)
  })

  t.test(`${where}: keys of different principals never meet`, async (t) => {
    const secret = 'a-test-secret-that-is-long-enough-for-hs256-0123456789'
    const { app, ledger } = await serve(t, { rateLimiting: { limitingHeader: 'x-client', limit: 1000 } }, { auth: { secret } })
    const alice = `Bearer ${app.jwt.sign({ userId: 'alice' })}`
    const bob = `Bearer ${app.jwt.sign({ userId: 'bob' })}`
    t.equal((await send(app, { route, key: 'same', headers: { authorization: alice } })).body.data.id, 'ch_1')
    t.equal((await send(app, { route, key: 'same', headers: { authorization: bob } })).body.data.id, 'ch_2', 'another user runs')
    t.equal((await send(app, { route, key: 'same', headers: { authorization: alice, 'x-client': 'elsewhere' } })).body.data.id, 'ch_1', 'the user, not the client, is the principal')
    t.equal((await send(app, { route, key: 'same', headers: { 'x-client': 'c1' } })).body.data.id, 'ch_3', 'an anonymous client is its own principal')
    t.equal((await send(app, { route, key: 'same', headers: { 'x-client': 'c2' } })).body.data.id, 'ch_4')
    t.equal((await send(app, { route, key: 'same', headers: { 'x-client': 'c1' } })).body.data.id, 'ch_3')
    t.equal(ledger.runs.charge, 4)
  })
}

t.test('the stored answer expires after rest.idempotency.ttl: the key runs again', async (t) => {
  const { app, ledger } = await serve(t, { idempotency: { ttl: 100 } })
  await send(app, { key: 'short' })
  t.equal((await send(app, { key: 'short' })).headers['idempotent-replayed'], 'true')
  await new Promise((resolve) => setTimeout(resolve, 150))
  const after = await send(app, { key: 'short' })
  t.equal(after.headers['idempotent-replayed'], undefined)
  t.equal(ledger.runs.charge, 2)
})

t.test('the endpoint and the per-action route share keys', async (t) => {
  const { app, ledger } = await serve(t)
  await send(app, { key: 'both' })
  t.equal((await send(app, { key: 'both', route: true })).headers['idempotent-replayed'], 'true')
  t.equal(ledger.runs.charge, 1)
})

t.test('a store that fails is a 503 and the action does not run', async (t) => {
  const broken = {
    acquire: () => Promise.reject(new Error('connection refused')),
    complete: () => undefined,
    release: () => undefined,
  }
  const stalled = { acquire: () => new Promise<never>(() => {}), complete: () => undefined, release: () => undefined }
  for (const store of [broken, stalled]) {
    const { app, ledger } = await serve(t, { idempotency: { store, timeout: 100 } })
    const answer = await send(app, { key: 'k' })
    t.equal(answer.status, 503)
    t.same(answer.body, { status: false, message: messages.idempotencyUnavailable, data: {} })
    t.equal(ledger.runs.charge, undefined)
  }
})

t.test('a streaming action cannot declare idempotency; an unknown mode is refused', async (t) => {
  const stream = createAction({ name: 'feed', description: 'Streams', stream: true, handler: async function* () {} } as never)
  Object.assign(stream, { idempotency: 'required' })
  await t.rejects(createServer({ serverName: 's', forceNewInstance: true, logServices: false, services: [{ name: 'svc', description: 'd', actions: [stream] }] }), {
    code: 'FA_ERR_CONFIG',
    message: messages.idempotencyOnStream('svc.feed'),
  })
  const odd = createAction({ name: 'odd', description: 'd', handler: () => Ok({}) })
  Object.assign(odd, { idempotency: 'always' })
  await t.rejects(createServer({ serverName: 's', forceNewInstance: true, logServices: false, services: [{ name: 'svc', description: 'd', actions: [odd] }] }), {
    code: 'FA_ERR_CONFIG',
    message: messages.idempotencyMode('svc.odd', 'always'),
  })
})

t.test('over a real socket: a client that leaves before its answer leaves nothing stored', async (t) => {
  const ledger: Ledger = { runs: {} }
  const server = await buildServer({ services: [paymentService(ledger)] })
  t.teardown(() => server.close())
  const address = new URL(await server.app.listen({ port: 0, host: '127.0.0.1' }))
  const body = JSON.stringify({ intent: 'execute', service: 'pay', action: 'charge', payload: { amount: 5 } })
  const post = (key: string) =>
    fetch(`${address.origin}/api/services`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body })
  let open!: () => void
  ledger.gate = new Promise((resolve) => (open = resolve))
  const started = new Promise<void>((resolve) => (ledger.started = resolve))
  const gone = httpRequest({ host: address.hostname, port: address.port, path: '/api/services', method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'left' } })
  gone.on('error', () => {})
  gone.end(body)
  await started
  gone.destroy()
  // The server has seen the client leave once its side of the connection is closed (not after a fixed wait).
  const connections = () => new Promise<number>((resolve, reject) => server.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))))
  for (let i = 0; (await connections()) > 0; i++) {
    if (i > 2000) throw new Error('the server never saw the client leave')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  open()
  ledger.gate = undefined
  // The first run's answer reached nobody: the key is free once it ends (409 until then).
  let retry = await post('left')
  for (let attempt = 0; retry.status === 409 && attempt < 1000; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    retry = await post('left')
  }
  t.equal(retry.status, 200)
  t.equal(retry.headers.get('idempotent-replayed'), null)
  t.equal(ledger.runs.charge, 2)
  // Over the socket the replay carries the header too.
  const replay = await post('left')
  t.equal(replay.headers.get('idempotent-replayed'), 'true')
  t.same(await replay.json(), await retry.json())
  t.equal(ledger.runs.charge, 2)
})
