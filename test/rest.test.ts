import t from 'tap'
import fp from 'fastify-plugin'
import { messages } from '../lib/index.js'
import { buildServer } from './helpers/server.js'

t.test('status route', async (t) => {
  const on = await buildServer({ serverName: 'Orders API', rest: { enableStatus: true } })
  const off = await buildServer()
  t.teardown(() => Promise.all([on.close(), off.close()]))
  const status = await on.app.inject({ url: '/status' })
  t.equal(status.statusCode, 200)
  t.same(status.json(), { status: true, message: 'Orders API is running', data: {} })
  const missing = await off.app.inject({ url: '/status' })
  t.equal(missing.statusCode, 404)
  t.same(missing.json(), { status: false, message: messages.routeNotFound('/api'), data: {} })
})

t.test('unmatched routes get the 404 envelope naming the base URL', async (t) => {
  const server = await buildServer({ rest: { baseUrl: '/v1' } })
  t.teardown(() => server.close())
  for (const [method, url] of [['GET', '/'], ['GET', '/v1/services'], ['PUT', '/v1/services'], ['POST', '/api/services'], ['DELETE', '/x/y?z=1']] as const) {
    const response = await server.app.inject({ method, url })
    t.equal(response.statusCode, 404, `${method} ${url}`)
    t.same(response.json(), { status: false, message: messages.routeNotFound('/v1'), data: {} })
  }
})

t.test('a malformed URL is an envelope, not Fastify’s shape', async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  const response = await server.app.inject({ method: 'POST', url: '/api/%E0%A4%A' })
  t.equal(response.statusCode, 400)
  t.same(response.json(), { status: false, message: messages.badUrl, data: {} })
})

t.test('custom routes and plugins added after createServer', async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  const { app } = server
  app.get('/hello/:name', async (request) => ({ status: true, message: 'hi', data: { name: (request.params as { name: string }).name } }))
  app.delete('/boom', async () => {
    throw new Error('connection string postgres://user:password@db')
  })
  app.get('/teapot', async (_request, reply) => reply.code(418).send({ status: false, message: 'short and stout', data: {} }))
  app.get('/http-error', async () => {
    throw Object.assign(new Error('Conflict on id 7'), { statusCode: 409 })
  })
  app.get('/unavailable', async () => {
    throw Object.assign(new Error('pool exhausted: 10.0.0.5'), { statusCode: 503 })
  })
  await app.register(
    fp(async (instance) => {
      instance.decorate('plugged', 'yes')
    }),
  )
  await app.register(async (scope) => {
    scope.get('/scoped', async () => ({ status: true, message: 'scoped', data: { plugged: (app as unknown as { plugged: string }).plugged } }))
  })

  t.same((await app.inject({ url: '/hello/ada' })).json(), { status: true, message: 'hi', data: { name: 'ada' } })
  const boom = await app.inject({ method: 'DELETE', url: '/boom' })
  t.equal(boom.statusCode, 500)
  t.same(boom.json(), { status: false, message: messages.internal, data: {} })
  t.notMatch(boom.body, /password|stack|at /)
  t.equal((await app.inject({ url: '/teapot' })).statusCode, 418)
  const conflict = await app.inject({ url: '/http-error' })
  t.equal(conflict.statusCode, 409)
  t.same(conflict.json(), { status: false, message: 'Conflict on id 7', data: {} })
  const unavailable = await app.inject({ url: '/unavailable' })
  t.equal(unavailable.statusCode, 503)
  t.same(unavailable.json(), { status: false, message: messages.internal, data: {} }, '5xx internals are not sent')
  t.same((await app.inject({ url: '/scoped' })).json(), { status: true, message: 'scoped', data: { plugged: 'yes' } })
})

t.test('custom routes run inside the request scope', async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  server.app.get('/who', async () => {
    server.context.setSession('rest', { here: true })
    const rest = server.context.get<{ req: { url: string } }>('rest')
    return { status: true, message: 'who', data: { url: rest?.req.url, session: server.context.getSession('rest') } }
  })
  t.same((await server.app.inject({ url: '/who' })).json().data, { url: '/who', session: { here: true } })
  t.equal(server.context.getSession('rest'), undefined)
})

t.test('engine and context are reachable from the app through getActions', async (t) => {
  const { getActions } = await import('../lib/index.js')
  const server = await buildServer()
  t.teardown(() => server.close())
  const handle = getActions(server.app)
  t.equal(handle.engine, server.engine)
  t.equal(handle.context, server.context)
  t.equal(handle.prefix, '')
})

t.test('a real listening socket answers the same envelopes', async (t) => {
  const server = await buildServer({ rest: { enableStatus: true } })
  t.teardown(() => server.close())
  const address = await server.app.listen({ port: 0, host: '127.0.0.1' })
  const ok = await fetch(`${address}/api/services`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ intent: 'execute', service: 'tasks', action: 'echo', payload: { title: 'a', count: 1 } }),
  })
  t.equal(ok.status, 200)
  t.same(await ok.json(), { status: true, message: messages.executed('tasks', 'echo'), data: { title: 'a', count: 1 } })
  const plain = await fetch(`${address}/api/services`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' })
  t.equal(plain.status, 415)
  t.same(await plain.json(), { status: false, message: messages.unsupportedMediaType, data: {} })
  const status = await fetch(`${address}/status`)
  t.same(await status.json(), { status: true, message: 'test-server is running', data: {} })
})

t.test('a request too broken for Fastify still gets a JSON envelope over the socket', async (t) => {
  const { connect } = await import('node:net')
  const server = await buildServer()
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = server.app.server.address() as { port: number }
  const raw = (payload: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.end(payload))
      let data = ''
      socket.on('data', (chunk) => (data += chunk))
      socket.on('close', () => resolve(data))
      socket.on('error', reject)
    })
  const garbage = await raw('NOT HTTP AT ALL\r\n\r\n')
  t.match(garbage, /^HTTP\/1\.1 400 Bad Request/)
  t.ok(garbage.endsWith(JSON.stringify({ status: false, message: messages.badRequest, data: {} })), garbage)
  const hugeHeader = await raw(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
  t.match(hugeHeader, /^HTTP\/1\.1 431 /)
  t.match(hugeHeader, /"status":false/)
})
