import t from 'tap'
import { Writable } from 'node:stream'
import { createServer, messages, type ServerConfig } from '../lib/index.js'
import { echoService } from './helpers/fixtures.js'

/** A pino destination that keeps every line as parsed JSON. */
function logSink() {
  const lines: Record<string, any>[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line))
      done()
    },
  })
  return { lines, stream }
}

const base: ServerConfig = { serverName: 'opts', logServices: false, forceNewInstance: true, services: [echoService] }

t.test("rest.fastify reaches Fastify: logger, request ids, trustProxy", async (t) => {
  const { lines, stream } = logSink()
  const server = await createServer({
    ...base,
    rest: {
      baseUrl: '/api',
      allowedOrigins: [],
      fastify: { logger: { level: 'info', stream }, trustProxy: true, requestIdHeader: 'x-request-id', genReqId: () => 'generated-id' },
    },
  })
  t.teardown(() => server.close())
  const { app } = server.rest
  app.get('/who', async (request) => ({ id: request.id, ip: request.ip }))
  app.get('/explode', async () => {
    throw new Error('secret database password in this message')
  })

  const who = await app.inject({ url: '/who', headers: { 'x-request-id': 'abc-123', 'x-forwarded-for': '203.0.113.9' } })
  t.same(who.json(), { id: 'abc-123', ip: '203.0.113.9' })
  t.same((await app.inject({ url: '/who', headers: { 'x-forwarded-for': '203.0.113.9' } })).json().id, 'generated-id')

  const boom = await app.inject({ url: '/explode', headers: { 'x-request-id': 'req-500' } })
  t.same([boom.statusCode, boom.json()], [500, { status: false, message: messages.internal, data: {} }], 'the client never sees the error')
  const logged = lines.find((line) => line.level === 50)
  t.ok(logged, 'the 500 is logged at error level')
  t.equal(logged?.reqId, 'req-500', 'with the request id')
  t.match(logged?.err, { message: 'secret database password in this message', type: 'Error' }, 'with the real error')
  t.equal(logged?.code, 'FA_ERR_INTERNAL', 'and the code of the answer')
  t.match(logged?.msg, /GET \/explode: secret database password/)
})

t.test('a 500 from the pipeline (a handler that returns no Result) is logged with its code, never answered', async (t) => {
  const { lines, stream } = logSink()
  const broken = { name: 'broken', description: 'Returns no Result', handler: () => 'oops' as never }
  const server = await createServer({
    ...base,
    services: [{ name: 'bad', description: 'Bad', actions: [broken] }],
    rest: { baseUrl: '/api', allowedOrigins: [], fastify: { logger: { level: 'info', stream } } },
  })
  t.teardown(() => server.close())
  const answer = await server.rest.app.inject({
    method: 'POST',
    url: '/api/services',
    headers: { 'x-request-id': 'r-1' },
    payload: { intent: 'execute', service: 'bad', action: 'broken', payload: {} },
  })
  t.same([answer.statusCode, answer.json()], [500, { status: false, message: messages.internal, data: {} }])
  const logged = lines.find((line) => line.level === 50)
  t.match(logged, { code: 'FA_ERR_NOT_A_RESULT', action: 'bad.broken', msg: messages.notAResult('bad.broken') })
  t.ok(logged?.reqId, 'with the request id')
})

t.test('rest.bodyLimit wins over rest.fastify.bodyLimit, which wins over the default', async (t) => {
  const body = { intent: 'execute', service: 'tasks', action: 'echo', payload: { title: 'x'.repeat(300), count: 1 } }
  const post = async (rest: NonNullable<ServerConfig['rest']>) => {
    const server = await createServer({ ...base, rest })
    t.teardown(() => server.close())
    return (await server.rest!.app.inject({ method: 'POST', url: '/api/services', payload: body })).statusCode
  }
  t.equal(await post({ baseUrl: '/api', allowedOrigins: [], fastify: { bodyLimit: 100 } }), 413)
  t.equal(await post({ baseUrl: '/api', allowedOrigins: [], bodyLimit: 10_000, fastify: { bodyLimit: 100 } }), 200)
  t.equal(await post({ baseUrl: '/api', allowedOrigins: [] }), 200)
})

t.test('the printed URLs follow https', async (t) => {
  const logs = t.capture(console, 'log')
  const server = await createServer({ ...base, rest: { baseUrl: '/api', allowedOrigins: [], enableStatus: true, port: 0, fastify: { https: {} } } })
  t.teardown(() => server.close())
  await server.rest.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (server.rest.app.server.address() as { port: number }).port
  t.same(logs().map((call) => call.args[0]), [`POST https://localhost:${port}/api/services\nGET https://localhost:${port}/status`])
})

t.test('with Fastify logging and no resources.logger, diagnostics go to the Fastify logger', async (t) => {
  const { lines, stream } = logSink()
  const server = await createServer({
    ...base,
    diagnostics: true,
    rest: { baseUrl: '/api', allowedOrigins: [], rateLimiting: { limitingHeader: 'x-client' }, fastify: { logger: { level: 'info', stream } } },
  })
  t.teardown(() => server.close())
  const consoleInfo = t.capture(console, 'info')
  await server.rest.app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'execute', service: 'tasks', action: 'list', payload: {} } })
  const notice = lines.find((line) => line.atFunction === 'rateLimit.key')
  t.ok(notice, 'the rate-limit key fallback is a Fastify log line')
  t.equal(notice?.msg, messages.rateLimitKeyFallback('x-client', '127.0.0.1'), 'keyed by the address app.inject gives (127.0.0.1)')
  t.match(notice?.logId, /^fa-/)
  t.same(consoleInfo(), [], 'nothing on the console')
})

t.test('invalid rest.fastify and limits fail at boot with a coded error naming the field', async (t) => {
  await t.rejects(createServer({ ...base, rest: { baseUrl: '/api', allowedOrigins: [], fastify: 'fast' as never } }), {
    code: 'FA_ERR_CONFIG',
    message: /^createServer: rest\.fastify must be an object/,
  })
  await t.rejects(createServer({ ...base, rest: { baseUrl: '/api', allowedOrigins: [], bodyLimit: -1 } }), {
    code: 'FA_ERR_CONFIG',
    message: 'createServer: rest.bodyLimit must be a positive integer, got -1',
  })
  await t.rejects(createServer({ ...base, actionTimeout: 'soon' as never }), {
    code: 'FA_ERR_CONFIG',
    message: `createServer: actionTimeout must be a positive integer, got 'soon'`,
  })
  await t.rejects(createServer({ ...base, services: [] }), { code: 'FA_ERR_EMPTY_SERVICES', message: messages.emptyServices })
})
