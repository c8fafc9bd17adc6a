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

t.test('app.fetch answers a standard Response: byte-stream body, bodyUsed, clone, every reader', async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  const { app } = server
  app.get('/bytes', async (_request, reply) => reply.type('application/octet-stream').send(Buffer.from([0, 1, 2, 250, 255])))
  app.get('/text', async (_request, reply) => reply.type('text/plain; charset=utf-8').send('héllo €'))
  app.get('/empty', async (_request, reply) => reply.code(200).send(''))
  app.get('/not-modified', async (_request, reply) => reply.code(304).send())
  app.get('/reset', async (_request, reply) => reply.code(205).send())
  app.get('/multi', async (_request, reply) => {
    reply.header('set-cookie', ['a=1', 'b=2', 'c=3'])
    reply.header('x-list', 'one, two')
    return 'ok'
  })

  const text = await app.fetch('/text')
  t.ok(text instanceof Response)
  t.equal(Object.getPrototypeOf(text), Response.prototype, 'a Response, not a subclass')
  t.equal(text.statusText, 'OK')
  t.equal(text.ok, true)
  t.equal(text.type, 'default')
  t.equal(text.redirected, false)
  t.equal(text.bodyUsed, false)
  t.ok(text.body instanceof ReadableStream)
  t.equal(await text.text(), 'héllo €')
  t.equal(text.bodyUsed, true)
  await t.rejects(text.text(), TypeError, 'a body reads once')
  await t.rejects(text.arrayBuffer(), TypeError, 'in any form')

  const bytes = await app.fetch('/bytes')
  t.same([...new Uint8Array(await bytes.arrayBuffer())], [0, 1, 2, 250, 255])
  const blob = await (await app.fetch('/bytes')).blob()
  t.equal(blob.size, 5)
  t.equal(blob.type, 'application/octet-stream')

  const byob = (await app.fetch('/bytes')).body!.getReader({ mode: 'byob' })
  const first = await byob.read(new Uint8Array(3))
  t.same([...first.value!], [0, 1, 2], 'the body is a byte stream: a BYOB reader reads it in pieces')
  const second = await byob.read(new Uint8Array(8))
  t.same([...second.value!], [250, 255])
  t.equal((await byob.read(new Uint8Array(8))).done, true)

  const streamed = await app.fetch('/bytes')
  const chunks: number[] = []
  const reader = streamed.body!.getReader()
  for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(...read.value)
  t.same(chunks, [0, 1, 2, 250, 255], 'read as a stream')
  t.equal(streamed.bodyUsed, true)

  const original = await app.fetch('/text')
  const copy = original.clone()
  t.equal(await original.text(), 'héllo €')
  t.equal(await copy.text(), 'héllo €', 'a clone reads the same bytes')

  const locked = await app.fetch('/text')
  locked.body!.getReader()
  t.equal(locked.bodyUsed, false, 'a locked, unread body is not used')
  await t.rejects(locked.text(), TypeError, 'but a locked body cannot be read again')

  const empty = await app.fetch('/empty')
  t.equal(empty.status, 200)
  t.ok(empty.body instanceof ReadableStream, 'an empty 200 still has a body')
  t.equal(await empty.text(), '')
  t.equal(empty.headers.get('content-length'), '0')

  for (const path of ['/not-modified', '/reset']) {
    const none = await app.fetch(path)
    t.equal(none.body, null, `${path}: a null-body status has no body`)
    t.equal(await none.text(), '')
    t.equal(none.bodyUsed, false)
  }
  const head = await app.fetch('/text', { method: 'HEAD' })
  t.equal(head.status, 200)
  t.equal(head.body, null, 'HEAD has no body')

  const multi = await app.fetch('/multi')
  t.same(multi.headers.getSetCookie(), ['a=1', 'b=2', 'c=3'])
  t.equal(multi.headers.get('set-cookie'), 'a=1, b=2, c=3')
  t.equal(multi.headers.get('x-list'), 'one, two')
  multi.headers.set('x-added', 'yes')
  t.equal(multi.headers.get('x-added'), 'yes', 'the headers are mutable, as those of any constructed Response')
  t.same(
    [...(await app.fetch('/multi')).headers].map(([name]) => name).filter((name) => !name.startsWith('access-control-')),
    ['connection', 'content-length', 'content-type', 'date', 'set-cookie', 'set-cookie', 'set-cookie', 'x-list'],
    'headers iterate sorted, one set-cookie per cookie',
  )
})

t.test('app.fetch sends the same request through the fast path and through new Request', async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  const { app } = server
  app.all('/echo', async (request) => ({
    method: request.method,
    url: request.url,
    host: request.headers.host,
    headers: Object.entries(request.headers).filter(([name]) => name !== 'host' && name !== 'user-agent'),
    body: typeof request.body === 'string' ? request.body : request.body === undefined ? null : request.body,
  }))
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) => done(null, body))
  app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_request, body, done) => done(null, `bytes:${[...(body as Buffer)].join(',')}`))
  const cases: Array<[string, RequestInit]> = [
    ['/echo', { headers: { 'X-Mixed-Case': 'v', accept: 'text/html' } }],
    ['/echo', { headers: { 'x-spaces': '  padded value \t', 'x-empty': '' } }],
    ['/echo', { headers: { 'x-a': '1', 'X-A': '2' } }],
    ['/echo', { headers: [['x-b', '1'], ['x-b', '2'], ['z', 'last'], ['a', 'first']] }],
    ['/echo', { headers: new Headers({ 'x-from': 'headers' }) }],
    ['/echo', { headers: { 'x-latin1': 'caf\u00e9' } }],
    ['/echo?q=a%20b&r=%E2%82%AC', {}],
    ['http://localhost/echo?q=a b&x=<>', {}],
    ['http://localhost:3000/echo/../echo', {}],
    ['http://127.0.0.1/echo#fragment', {}],
    ['http://example.test/%65cho', {}],
    ['/echo', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'plain text' }],
    ['/echo', { method: 'put', body: 'default type' }],
    ['/echo', { method: 'PATCH', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array([1, 2, 3]).subarray(1) }],
    ['/echo', { method: 'DELETE', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array([9, 8]).buffer }],
    ['/echo', { method: 'OPTIONS' }],
    ['/echo', {}],
    ['/echo?', {}],
    ["/echo?it's=1&a=(b)", {}],
    ["http://localhost/echo/it's/x?q=1", {}],
    ['/echo/./x/../', {}],
    ['/echo/%2e%2E/echo', {}],
    ['//echo', {}],
    ['/echo/a//b.c/d.', {}],
    ['http://localhost/echo?x=%zz&y=?/', {}],
    ['http://LOCALHOST/echo', {}],
    ['/echo', { headers: Object.assign(Object.create(null), { 'x-null-proto': 'yes' }) }],
    ['/echo', { headers: { 'x-number': 5 } as unknown as HeadersInit }],
    ['/echo', { headers: { 'content-type': 'text/plain', b: '2', a: '1' }, method: 'POST', body: 'sorted' }],
    ['/echo', { headers: { zz: 'last', b: '2' }, method: 'POST', body: 'default type sorted in' }],
  ]
  for (const [input, init] of cases) {
    const direct = Object.keys(init).length === 0 ? await app.fetch(input) : await app.fetch(input, init)
    const absolute = input.startsWith('/') ? `http://localhost${input}` : input
    const viaRequest = await app.fetch(new Request(absolute, init))
    const label = `${init.method ?? 'GET'} ${input} ${JSON.stringify(init.headers instanceof Headers ? [...init.headers] : init.headers ?? null)}`
    t.equal(direct.status, viaRequest.status, `${label}: status`)
    t.equal(await direct.text(), await viaRequest.text(), `${label}: what the route saw`)
  }
  const custom = await Promise.allSettled([app.fetch('/echo', { method: 'Custom' }), app.fetch(new Request('http://localhost/echo', { method: 'Custom' }))])
  t.same(custom.map((settled) => settled.status), ['rejected', 'rejected'], 'a method inject does not know is refused both ways')
  await t.rejects(app.fetch('/echo', { headers: { 'x-bad': 'caf\u20ac' } }), TypeError, 'a header value beyond Latin-1 throws, as new Request does')
  await t.rejects(app.fetch('/echo', { headers: { 'bad name': 'v' } }), TypeError, 'an invalid header name throws')
  await t.rejects(app.fetch('/echo', { headers: { [Symbol('x')]: 'v' } as unknown as HeadersInit }), TypeError, 'a symbol header name throws')
  await t.rejects(app.fetch('/echo', { headers: { 'x-bad': 'a\r\nb' } }), TypeError, 'a header value with CR LF throws')
})
