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

t.test('app.fetch reads init the way new Request does (fast path and fallback agree)', async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  const { app } = server
  const body = JSON.stringify({ intent: 'execute', service: 'tasks', action: 'list', payload: {} })
  const viaString = await app.fetch('/api/services', { method: 'POST', body })
  t.equal(viaString.status, 415, 'a string body defaults to text/plain;charset=UTF-8, which is refused')
  const viaRequest = await app.fetch(new Request('http://localhost/api/services', { method: 'POST', body }))
  t.equal(viaRequest.status, 415, 'the same through a Request object')
  const bytes = await app.fetch('/api/services', { method: 'post', headers: { 'content-type': 'application/json' }, body: new TextEncoder().encode(body) })
  t.equal(bytes.status, 200, 'bytes and a lower-case method')
  t.same((await bytes.json()).data, { result: [1, 2, 3] })
  const blob = await app.fetch('/api/services', { method: 'POST', headers: { 'content-type': 'application/json' }, body: new Blob([body]) })
  t.equal(blob.status, 200, 'a Blob body goes through new Request')
  await t.rejects(app.fetch('/api/services', { method: 'TRACE' }), TypeError, 'a forbidden method throws as fetch does')
})
