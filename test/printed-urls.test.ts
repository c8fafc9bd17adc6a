/**
 * One true URL block: printed once, after listen, with the address really taken (a port of 0
 * included), listing every route that is on. Nothing before listen (the CLI's `list`, `openapi` and
 * `mcp` never listen); in plugin mode nothing on the console: one `info` record through the host's logger.
 */
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import { createAction, createServer, fastifyActions, Ok } from '../lib/index.js'

const ping = createAction({ name: 'ping', description: 'Answers pong', handler: () => Ok({ pong: true }) })
const services = [{ name: 'health', description: 'Health', actions: [ping] }]
const everyRoute = { baseUrl: '/api', allowedOrigins: [], enableStatus: true, discovery: { enabled: true }, openapi: { enabled: true }, mcp: { enabled: true } }

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

function blockFor(origin: string): string[] {
  return [`POST ${origin}/api/services`, `GET ${origin}/status`, `GET ${origin}/api/openapi.json`, `GET ${origin}/api/reference`, `POST ${origin}/api/mcp`]
}

t.test('createServer with port 0: nothing before listen, then one block with the port taken and every route that is on', async (t) => {
  const lines = captureLog(t)
  const server = await createServer({ serverName: 'urls', logServices: false, forceNewInstance: true, services, rest: { ...everyRoute, host: '127.0.0.1', port: 0 } })
  t.teardown(() => server.close())
  await server.rest.app.ready()
  t.same(lines, [], 'nothing is printed before listen (no :0 URL)')
  await server.rest.app.listen({ port: server.rest.config.port, host: '127.0.0.1' })
  const port = (server.rest.app.server.address() as { port: number }).port
  t.not(port, 0)
  const origin = `http://127.0.0.1:${port}`
  t.same(lines, blockFor(origin), 'printed once, with the real port')
  // The printed URLs answer over the real socket.
  t.equal((await fetch(`${origin}/status`)).status, 200)
  t.equal((await fetch(`${origin}/api/openapi.json`)).status, 200)
  const executed = await fetch(`${origin}/api/services`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ intent: 'execute', service: 'health', action: 'ping', payload: {} }),
  })
  t.same(await executed.json(), { status: true, message: "Action 'health.ping' executed", data: { pong: true } })
})

t.test('createServer on its configured port and host localhost: the block names localhost, every route once', async (t) => {
  const probe = Fastify()
  await probe.listen({ port: 0, host: '127.0.0.1' })
  const port = (probe.server.address() as { port: number }).port
  await probe.close()
  const lines = captureLog(t)
  const server = await createServer({ serverName: 'same', logServices: false, forceNewInstance: true, services, rest: { ...everyRoute, host: 'localhost', port } })
  t.teardown(() => server.close())
  await server.rest.app.listen({ port, host: '127.0.0.1' })
  t.same(lines, blockFor(`http://localhost:${port}`))
})

t.test('only the routes that are on are listed', async (t) => {
  const lines = captureLog(t)
  const server = await createServer({ serverName: 'few', logServices: false, forceNewInstance: true, services, rest: { baseUrl: '/api', allowedOrigins: [], openapi: { enabled: true, reference: false } } })
  t.teardown(() => server.close())
  await server.rest.app.listen({ port: 0, host: '127.0.0.1' })
  // rest.host defaults to localhost, which reaches the loopback address listened on.
  const origin = `http://localhost:${(server.rest.app.server.address() as { port: number }).port}`
  t.same(lines, [`POST ${origin}/api/services`, `GET ${origin}/api/openapi.json`])
})

t.test('createServer that never listens prints no URL', async (t) => {
  const lines = captureLog(t)
  const server = await createServer({ serverName: 'quiet', logServices: false, forceNewInstance: true, services, rest: everyRoute })
  t.teardown(() => server.close())
  const response = await server.rest.app.inject({ method: 'GET', url: '/status' })
  t.equal(response.statusCode, 200)
  t.same(lines, [])
})

t.test("the plugin prints nothing: the host's logger gets one info record with the URLs, prefix included", async (t) => {
  const lines = captureLog(t)
  const records: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) records.push(JSON.parse(line))
      done()
    },
  })
  const app = Fastify({ logger: { level: 'info', stream } })
  t.teardown(() => app.close())
  await app.register(fastifyActions, { serverName: 'mounted', services, rest: { baseUrl: '/api', allowedOrigins: [], enableStatus: true }, prefix: '/v1' })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  t.same(lines, [], 'nothing on the console')
  const ours = records.filter((record) => record.msg === 'fastify-actions routes')
  t.equal(ours.length, 1)
  t.equal(ours[0].level, 30, 'at info')
  t.same(ours[0].urls, [`POST ${origin}/v1/api/services`, `GET ${origin}/v1/status`])
  t.equal((await fetch(`${origin}/v1/status`)).status, 200)
})
