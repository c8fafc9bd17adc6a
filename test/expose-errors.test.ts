/**
 * Issue 30, finding 15: the text of an unexpected exception (a database URL with its password)
 * reached clients. `exposeErrors` (default false when NODE_ENV is production) answers a generic
 * text with the request id and logs the detail; otherwise the specification's rule holds (the
 * exception's message, HTTP 400).
 */
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { createAction, messages, type Service } from '../lib/index.js'
import { recordingLogger } from './helpers/logger.js'
import { rawRequest } from './helpers/raw-http.js'
import { buildServer, type TestConfig } from './helpers/server.js'

const LEAK = 'connect ECONNREFUSED postgres://app:s3cret@db.internal:5432/prod'
const leaky = createAction({
  name: 'leaky',
  description: 'Throws an error whose text must not reach a client',
  handler: () => {
    throw new Error(LEAK)
  },
})
const service: Service = { name: 'db', description: 'Database calls', actions: [leaky] }

async function call(t: Test, config: TestConfig) {
  const server = await buildServer({ services: [service], ...config, rest: { mcp: { enabled: true } } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = server.app.server.address() as AddressInfo
  const rest = await rawRequest(port, {
    method: 'POST',
    path: '/api/services',
    headers: { host: 'localhost', 'content-type': 'application/json' },
    body: JSON.stringify({ intent: 'execute', service: 'db', action: 'leaky', payload: {} }),
  })
  const mcp = await rawRequest(port, {
    method: 'POST',
    path: '/api/mcp',
    headers: { host: 'localhost', 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'db_leaky', arguments: {} } }),
  })
  return { rest, mcp }
}

t.test('exposeErrors: false answers "Internal server error (request id <id>)" and logs the text under that id', async (t) => {
  const { logger, entries } = recordingLogger()
  const { rest, mcp } = await call(t, { exposeErrors: false, resources: { logger } })
  t.equal(rest.status, 400, "the specification's status for a throwing handler")
  t.match(rest.json, { status: false, data: {} })
  t.match(rest.json.message, /^Internal server error \(request id [\w-]+\)$/)
  t.notMatch(rest.text, /s3cret|postgres/)
  const id = /request id ([\w-]+)/.exec(rest.json.message)![1]!
  t.equal(rest.json.message, messages.internalWithId(id))
  t.ok(entries.some((entry) => entry.level === 'error' && entry.message.includes(LEAK) && entry.message.includes(id)), 'the detail is logged under the id')
  t.notMatch(mcp.text, /s3cret|postgres/, 'MCP tool results too')
  t.match(mcp.json.result, { isError: true, content: [{ type: 'text', text: /^Internal server error \(request id [\w-]+\)$/ }] })
})

t.test('exposeErrors: true (the default outside production) keeps the specification: the exception message', async (t) => {
  const { rest } = await call(t, { exposeErrors: true })
  t.same({ status: rest.status, body: rest.json }, { status: 400, body: { status: false, message: LEAK, data: {} } })
})

t.test('NODE_ENV=production turns exposeErrors off by default', async (t) => {
  const before = process.env.NODE_ENV
  process.env.NODE_ENV = 'production'
  t.teardown(() => {
    if (before === undefined) delete process.env.NODE_ENV
    else process.env.NODE_ENV = before
  })
  const { logger } = recordingLogger()
  const { rest } = await call(t, { resources: { logger } })
  t.match(rest.json.message, /^Internal server error \(request id [\w-]+\)$/)
})

t.test('exposeErrors must be a boolean', async (t) => {
  await t.rejects(buildServer({ exposeErrors: 'no' as never }), { code: 'FA_ERR_CONFIG', message: /exposeErrors must be a boolean/ })
})

t.test('exposeErrors: false hides a streaming action’s throw after its first event: the error event says the generic text with the request id', async (t) => {
  const leakyStream = createAction({
    name: 'leakyStream',
    description: 'Throws after one event',
    handler: async function* () {
      yield 1
      throw new Error(LEAK)
    },
  })
  const { logger, entries } = recordingLogger()
  const server = await buildServer({ services: [{ name: 'db', description: 'Database calls', actions: [leakyStream] }], exposeErrors: false, resources: { logger } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = server.app.server.address() as AddressInfo
  const answer = await rawRequest(port, {
    method: 'POST',
    path: '/api/services',
    headers: { host: 'localhost', 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ intent: 'execute', service: 'db', action: 'leakyStream', payload: {} }),
  })
  t.equal(answer.status, 200)
  t.notMatch(answer.text, /s3cret|postgres/)
  const error = /event: error\ndata: (.*)\n/.exec(answer.text)
  t.ok(error, 'an error event')
  const envelope = JSON.parse(error![1]!)
  t.match(envelope, { status: false, data: {} })
  const id = /request id ([\w-]+)/.exec(envelope.message)?.[1]
  t.equal(envelope.message, messages.internalWithId(id!))
  t.notMatch(id, /^fa-thrown-/, 'the id is the stream’s own request id: the generator ran in its request scope')
  t.ok(entries.some((entry) => entry.level === 'error' && entry.message.includes(LEAK) && entry.message.includes(id!)), 'the detail is logged under the id')
})
