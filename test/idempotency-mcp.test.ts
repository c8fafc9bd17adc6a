import t from 'tap'
import { messages } from '../lib/index.js'
import { connectClient, startMcpServer, textOf } from './helpers/mcp.js'
import { paymentService, type Ledger } from './helpers/idempotency.js'

t.test('MCP: idempotent tools carry idempotentHint; _meta.idempotencyKey follows the rules of the endpoint', async (t) => {
  const ledger: Ledger = { runs: {} }
  const server = await startMcpServer(t, { services: [paymentService(ledger)] })
  const client = await connectClient(t, server.url)
  const { tools } = await client.listTools()
  const byName = new Map(tools.map((tool) => [tool.name, tool]))
  t.same(byName.get('pay_charge')?.annotations, { idempotentHint: true })
  t.same(byName.get('pay_note')?.annotations, { idempotentHint: true })
  t.equal(byName.get('pay_plain')?.annotations, undefined, 'an action without idempotency makes no promise')

  const call = (key?: unknown, amount = 3) =>
    client.callTool({ name: 'pay_charge', arguments: { amount }, ...(key === undefined ? {} : { _meta: { idempotencyKey: key } }) })

  const missing = await call()
  t.equal(missing.isError, true)
  t.equal(textOf(missing), messages.idempotencyKeyRequired('pay.charge'))
  t.equal((await call(42)).isError, true, 'a key that is not a string is refused')
  t.equal(ledger.runs.charge, undefined)

  const first = await call('mcp-1')
  t.equal(first.isError, undefined)
  t.same(JSON.parse(textOf(first)), { id: 'ch_1', amount: 3 })
  const again = await call('mcp-1')
  t.same(again.content, first.content)
  t.same(again._meta, { idempotentReplayed: true })
  t.equal(ledger.runs.charge, 1)

  const reused = await call('mcp-1', 4)
  t.equal(reused.isError, true)
  t.equal(textOf(reused), messages.idempotencyKeyReused)

  // The endpoint and MCP share keys: the same caller's key replays over HTTP.
  const http = await server.app.inject({
    method: 'POST',
    url: '/api/services',
    remoteAddress: '127.0.0.1',
    headers: { 'idempotency-key': 'mcp-1' },
    payload: { intent: 'execute', service: 'pay', action: 'charge', payload: { amount: 3 } },
  })
  t.equal(http.headers['idempotent-replayed'], 'true')
  t.equal(ledger.runs.charge, 1)
})
