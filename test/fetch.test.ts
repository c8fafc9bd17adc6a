import t from 'tap'
import { messages } from '../lib/index.js'
import { buildServer } from './helpers/server.js'

t.test('app.fetch: a WHATWG Request in, a Response out', async (t) => {
  const server = await buildServer({ rest: { enableStatus: true } })
  t.teardown(() => server.close())
  const { app } = server
  app.get('/cookies', async (request, reply) => {
    reply.header('set-cookie', ['a=1; Path=/', 'b=2; Path=/'])
    return { status: true, message: 'cookies', data: { query: request.query, header: request.headers['x-test'] } }
  })
  app.head('/empty', async (_request, reply) => reply.code(204).send())

  const body = JSON.stringify({ intent: 'execute', service: 'tasks', action: 'echo', payload: { title: 't', count: 3 } })
  const ok = await app.fetch('http://localhost/api/services', { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  t.equal(ok.status, 200)
  t.match(ok.headers.get('content-type'), /application\/json/)
  t.same(await ok.json(), { status: true, message: messages.executed('tasks', 'echo'), data: { title: 't', count: 3 } })

  const fromRequest = await app.fetch(new Request('http://localhost/api/services', { method: 'POST', headers: { 'content-type': 'application/json' }, body }))
  t.equal(fromRequest.status, 200)

  const path = await app.fetch('/status')
  t.same(await path.json(), { status: true, message: 'test-server is running', data: {} })

  const cookies = await app.fetch(new URL('http://localhost/cookies?x=1&y=2'), { headers: { 'x-test': 'yes' } })
  t.same(cookies.headers.getSetCookie(), ['a=1; Path=/', 'b=2; Path=/'])
  t.same((await cookies.json()).data, { query: { x: '1', y: '2' }, header: 'yes' })

  const text = await app.fetch('/api/services', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' })
  t.equal(text.status, 415)

  const empty = await app.fetch('/empty', { method: 'HEAD' })
  t.equal(empty.status, 204)
  t.equal(empty.body, null)

  const missing = await app.fetch('/missing')
  t.equal(missing.status, 404)
  t.same(await missing.json(), { status: false, message: messages.routeNotFound('/api'), data: {} })
})
