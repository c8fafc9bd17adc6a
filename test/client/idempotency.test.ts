import t from 'tap'
import { clientErrorCodes, createClient } from '../../lib/client/index.js'
import { buildServer } from '../helpers/server.js'
import { paymentService, type Ledger } from '../helpers/idempotency.js'

/** A subtest's `t`. */
type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

/**
 * A real server whose first `drop` answers are lost: the action runs and its answer is kept, then the
 * socket is destroyed before a byte of the answer is written (what a killed proxy or a reset does).
 */
async function droppingServer(t: Tap, drop: number) {
  const ledger: Ledger = { runs: {} }
  const server = await buildServer({ services: [paymentService(ledger)] })
  t.teardown(() => server.close())
  const seen: Array<{ key: string | undefined; replayed: boolean }> = []
  let dropped = 0
  server.app.addHook('onSend', async (request, reply, payload) => {
    if (!request.url.endsWith('/services')) return payload
    seen.push({ key: request.headers['idempotency-key'] as string | undefined, replayed: reply.getHeader('idempotent-replayed') === 'true' })
    if (dropped < drop) {
      dropped++
      request.raw.socket.destroy()
    }
    return payload
  })
  const address = await server.app.listen({ port: 0, host: '127.0.0.1' })
  return { ledger, seen, baseUrl: `${address}/api` }
}

t.test('the typed client retries a lost answer with the same key: the action runs once', async (t) => {
  const { ledger, seen, baseUrl } = await droppingServer(t, 1)
  const client = createClient({ baseUrl, idempotent: ['pay.charge'], retry: { attempts: 2, delay: 10 } })
  const result = await client.invoke('pay', 'charge', { amount: 7 })
  t.same(result, { ok: true, value: { id: 'ch_1', amount: 7 } })
  t.equal(ledger.runs.charge, 1, 'ran once')
  t.equal(seen.length, 2, 'sent twice')
  t.match(seen[0].key, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a UUID')
  t.equal(seen[1].key, seen[0].key, 'the same key on the retry')
  t.same(seen.map((entry) => entry.replayed), [false, true], 'the retry got the stored answer')
  // The next call is another operation: a fresh key.
  await client.invoke('pay', 'charge', { amount: 7 })
  t.not(seen[2].key, seen[0].key)
  t.equal(ledger.runs.charge, 2)
})

t.test('the retry is bounded: every answer lost gives the network error after attempts + 1 sends', async (t) => {
  const { ledger, seen, baseUrl } = await droppingServer(t, 100)
  const client = createClient({ baseUrl, idempotent: ['pay.charge'], retry: { attempts: 3, delay: 5 } })
  const result = await client.invoke('pay', 'charge', { amount: 1 })
  t.equal(result.ok, false)
  if (!result.ok) t.equal(result.error.code, clientErrorCodes.network)
  t.equal(seen.length, 4)
  t.equal(ledger.runs.charge, 1, 'still ran once: every retry was a replay')
})

t.test('an action not listed as idempotent is never retried and sends no key', async (t) => {
  const { ledger, seen, baseUrl } = await droppingServer(t, 1)
  const client = createClient({ baseUrl, idempotent: ['pay.charge'], retry: { attempts: 3, delay: 5 } })
  const result = await client.invoke('pay', 'plain', {})
  t.equal(result.ok, false)
  t.equal(seen.length, 1)
  t.equal(seen[0].key, undefined)
  t.equal(ledger.runs.plain, 1)
})

t.test('a key of the caller is sent as is and retried; retry: false sends once', async (t) => {
  const { seen, baseUrl } = await droppingServer(t, 1)
  const client = createClient({ baseUrl })
  const result = await client.invoke('pay', 'note', {}, { idempotencyKey: 'order-42' })
  t.equal(result.ok, true)
  t.same(seen.map((entry) => entry.key), ['order-42', 'order-42'])
  const once = await droppingServer(t, 1)
  const strict = createClient({ baseUrl: once.baseUrl, idempotent: ['pay.charge'], retry: false })
  t.equal((await strict.invoke('pay', 'charge', { amount: 1 })).ok, false)
  t.equal(once.seen.length, 1)
})

t.test('a required action called through the client without a listing is the 400 naming the header', async (t) => {
  const { baseUrl } = await droppingServer(t, 0)
  const result = await createClient({ baseUrl }).invoke('pay', 'charge', { amount: 1 })
  t.equal(result.ok, false)
  if (!result.ok) {
    t.equal(result.error.httpStatus, 400)
    t.same(result.error.data, { header: 'Idempotency-Key' })
  }
})
