import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { getRequestStore, messages } from '../lib/index.js'
import { buildServer, execute } from './helpers/server.js'

t.test('middleware runs in registration order before the handler; a Response stops the request', async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  const order: string[] = []
  server.rest!.addMiddleware('*', async (_c, next) => {
    order.push('first')
    await next()
  })
  server.rest!.addMiddleware('/api/*', async (c, next) => {
    order.push('second')
    if (c.req.header('X-Api-Key') !== 'key') return c.json({ status: false, message: 'Missing API key', data: {} }, 401)
    await next()
  })
  server.rest!.addMiddleware('/other', async () => {
    order.push('never for /api')
  })

  const denied = await execute(server.app, 'tasks', 'list')
  t.equal(denied.statusCode, 401)
  t.same(denied.body, { status: false, message: 'Missing API key', data: {} })
  t.same(order, ['first', 'second'])

  order.length = 0
  const allowed = await execute(server.app, 'tasks', 'list', {}, { headers: { 'x-api-key': 'key' } })
  t.equal(allowed.statusCode, 200)
  t.same(order, ['first', 'second'])
})

t.test('await next() resolves after the response is sent; middleware sees the status and the request scope', async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  const seen: Record<string, unknown>[] = []
  server.rest!.addMiddleware('*', async (c, next) => {
    const store = getRequestStore()
    server.context.setSession('rest', { from: 'middleware' })
    await next()
    seen.push({ path: c.req.path, status: c.reply.statusCode, sent: c.reply.sent, sameStore: store === (c.req as unknown as { actionsStore: unknown }).actionsStore })
  })
  const answer = await execute(server.app, 'tasks', 'echo', { title: 'a', count: 1 })
  t.equal(answer.statusCode, 200)
  await sleep(10)
  t.same(seen, [{ path: '/api/services', status: 200, sent: true, sameStore: true }])
})

t.test('c.text, headers and cookies on a returned Response', async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  server.rest!.addMiddleware('/api', async (c) => {
    const response = c.text('teapot', 418, { 'x-extra': '1' })
    response.headers.append('set-cookie', 'a=1')
    response.headers.append('set-cookie', 'b=2')
    return response
  })
  const response = await server.app.inject({ method: 'POST', url: '/api/services' })
  t.equal(response.statusCode, 418)
  t.equal(response.body, 'teapot')
  t.equal(response.headers['x-extra'], '1')
  t.same(response.headers['set-cookie'], ['a=1', 'b=2'])
})

t.test('a middleware that throws, or neither calls next nor answers, gives the 500 envelope', async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  server.rest!.addMiddleware('/api/services', async () => {
    throw new Error('middleware secret')
  })
  const thrown = await execute(server.app, 'tasks', 'list')
  t.equal(thrown.statusCode, 500)
  t.same(thrown.body, { status: false, message: messages.internal, data: {} })

  const idle = await buildServer()
  t.teardown(() => idle.close())
  idle.rest!.addMiddleware('*', async () => {})
  const stuck = await execute(idle.app, 'tasks', 'list')
  t.equal(stuck.statusCode, 500)
  t.same(stuck.body, { status: false, message: messages.internal, data: {} })
})

t.test('an HTTP exception from middleware keeps its status and message', async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  server.rest!.addMiddleware('*', async () => {
    throw Object.assign(new Error('Payment required'), { statusCode: 402 })
  })
  const answer = await execute(server.app, 'tasks', 'list')
  t.equal(answer.statusCode, 402)
  t.same(answer.body, { status: false, message: 'Payment required', data: {} })
})

t.test('middleware applies to custom routes and to unmatched paths', async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  const paths: string[] = []
  server.rest!.addMiddleware('*', async (c, next) => {
    paths.push(c.req.path)
    await next()
  })
  server.app.get('/custom', async () => ({ status: true, message: 'custom', data: {} }))
  await server.app.inject({ url: '/custom?x=1' })
  await server.app.inject({ url: '/nowhere' })
  t.same(paths, ['/custom', '/nowhere'])
})

t.test('addMiddleware rejects a non-function', async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  t.throws(() => server.rest!.addMiddleware('*', 'nope' as never), TypeError)
})
