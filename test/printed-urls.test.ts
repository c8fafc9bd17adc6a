/**
 * Printed URLs that are true: the specification's line at createServer stays as it is (from
 * rest.host / rest.port); once the app listens on another address, the URLs it really answers on
 * (endpoint, status, OpenAPI, reference page, MCP) are printed too, for createServer and the plugin.
 */
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import { createAction, createServer, fastifyActions, Ok } from '../lib/index.js'

const ping = createAction({ name: 'ping', description: 'Answers pong', handler: () => Ok({ pong: true }) })
const services = [{ name: 'health', description: 'Health', actions: [ping] }]

/** Collects console.log lines until the test ends. */
function captureLog(t: Test): string[] {
  const lines: string[] = []
  const log = console.log
  console.log = (...args: unknown[]) => void lines.push(...args.map(String).join(' ').split('\n'))
  t.teardown(() => {
    console.log = log
  })
  return lines
}

t.test('createServer listening on another port prints the real URLs after the specification line', async (t) => {
  const lines = captureLog(t)
  const server = await createServer({
    serverName: 'urls',
    logServices: false,
    forceNewInstance: true,
    services,
    rest: { baseUrl: '/api', allowedOrigins: [], host: 'localhost', port: 8000, enableStatus: true, openapi: { enabled: true }, mcp: { enabled: true } },
  })
  t.teardown(() => server.close())
  t.same(lines, ['POST http://localhost:8000/api/services', 'GET http://localhost:8000/status'], 'the specification line, from config, before listen')
  await server.rest.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (server.rest.app.server.address() as { port: number }).port
  const origin = `http://127.0.0.1:${port}`
  t.same(lines.slice(2), [
    `Listening on ${origin}:`,
    `POST ${origin}/api/services`,
    `GET ${origin}/status`,
    `GET ${origin}/api/openapi.json`,
    `GET ${origin}/api/reference`,
    `POST ${origin}/api/mcp`,
  ])
  // The printed URLs answer over the real socket.
  const status = await fetch(`${origin}/status`)
  t.equal(status.status, 200)
  const executed = await fetch(`${origin}/api/services`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ intent: 'execute', service: 'health', action: 'ping', payload: {} }),
  })
  t.same(await executed.json(), { status: true, message: "Action 'health.ping' executed", data: { pong: true } })
})

t.test('createServer listening where the specification line points prints nothing more', async (t) => {
  const probe = Fastify()
  await probe.listen({ port: 0, host: '127.0.0.1' })
  const port = (probe.server.address() as { port: number }).port
  await probe.close()
  const lines = captureLog(t)
  const server = await createServer({ serverName: 'same', logServices: false, forceNewInstance: true, services, rest: { baseUrl: '/api', allowedOrigins: [], host: 'localhost', port } })
  t.teardown(() => server.close())
  await server.rest.app.listen({ port, host: '127.0.0.1' })
  t.same(lines, [`POST http://localhost:${port}/api/services`], 'localhost reaches 127.0.0.1 on the same port: one line, as before')
})

t.test('the plugin prints the real URLs, with its prefix, once the host app listens', async (t) => {
  const lines = captureLog(t)
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyActions, { serverName: 'mounted', services, rest: { baseUrl: '/api', allowedOrigins: [], enableStatus: true }, prefix: '/v1' })
  t.same(lines, [], 'nothing before listen')
  await app.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  t.same(lines, [`Listening on ${origin}:`, `POST ${origin}/v1/api/services`, `GET ${origin}/v1/status`])
  const response = await fetch(`${origin}/v1/status`)
  t.equal(response.status, 200)
})
