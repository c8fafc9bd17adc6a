import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import type { AddressInfo } from 'node:net'
import { createAction, fastifyActions, getActions, Ok, type Middleware, type Service } from '../../lib/index.js'
import { echoService } from '../helpers/fixtures.js'
import { rawTarget as rawRequest } from '../helpers/raw-target.js'
import { buildServer } from '../helpers/server.js'

// Every guard that decides by path (addMiddleware paths, addCors rules, the reference page's gate)
// decides on the path the router routes on, never the raw request target. These targets route to a
// guarded path while their raw text does not start with it; each is sent over a real socket, as
// written (fetch and inject normalise them away).

const wipe = createAction({ name: 'wipe', description: 'Wipes everything', handler: () => Ok({ wiped: true }) })
const admin: Service = { name: 'admin', description: 'Admin', actions: [wipe] }
const json = { 'content-type': 'application/json' }
const list = JSON.stringify({ intent: 'execute', service: 'tasks', action: 'list', payload: {} })

const apiKey: Middleware = (c, next) => (c.req.header('x-api-key') === 'secret' ? next() : c.json({ status: false, message: 'Invalid API key', data: {} }, 401))
const refusedKey = { status: false, message: 'Invalid API key', data: {} }

async function listen(app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return (app.server.address() as AddressInfo).port
}

t.test('addMiddleware: encoded, fragment and absolute-form targets meet the middleware', async (t) => {
  const server = await buildServer({ services: [echoService, admin], rest: { openapi: { actionRoutes: true } } })
  t.teardown(() => server.close())
  server.rest!.addMiddleware('/api/*', apiKey)
  server.rest!.addMiddleware('/api/services/admin/*', (c, next) => (c.req.header('x-admin') === 'yes' ? next() : c.json({ status: false, message: 'Admins only', data: {} }, 403)))
  server.rest!.addMiddleware('/api/services/tasks/list', (c, next) => (c.req.header('x-list') === 'yes' ? next() : c.json({ status: false, message: 'No listing', data: {} }, 403)))
  const port = await listen(server.app)

  // Absolute-form targets name a loopback authority: since issue 40 the authority is the Host the allowlist checks.
  for (const target of ['/api/services', '/%61pi/services', '/api/%73ervices', '/%61%70%69/services', 'http://localhost/api/services', 'https://localhost/%61pi/services?x=1', '/api/services?#', '/api/services#frag']) {
    const answer = await rawRequest(port, 'POST', target, json, list)
    t.equal(answer.status, 401, `${target}: the API key is asked for`)
    t.same(JSON.parse(answer.body), refusedKey, target)
  }
  const keyed = await rawRequest(port, 'POST', '/%61pi/services', { ...json, 'x-api-key': 'secret' }, list)
  t.equal(keyed.status, 200, 'with the key the encoded target runs')

  for (const target of ['/api/services/admin/wipe', '/api/%73ervices/admin/wipe', '/api/services/%61dmin/wipe', 'http://localhost/api/services/admin/wipe']) {
    const answer = await rawRequest(port, 'POST', target, { ...json, 'x-api-key': 'secret' }, '{}')
    t.equal(answer.status, 403, `${target}: the admin middleware runs`)
    t.same(JSON.parse(answer.body), { status: false, message: 'Admins only', data: {} })
  }
  for (const target of ['/api/services/tasks/list', '/api/services/tasks/list#', '/api/services/tasks/lis%74', '/api/services/tasks/list?a=b#c']) {
    const answer = await rawRequest(port, 'POST', target, { ...json, 'x-api-key': 'secret' }, '{}')
    t.equal(answer.status, 403, `${target}: the exact-path middleware runs`)
    t.same(JSON.parse(answer.body), { status: false, message: 'No listing', data: {} })
  }
  // An encoded slash is not a slash to the router: no route, the 404 envelope, nothing runs.
  const slash = await rawRequest(port, 'POST', '/api%2Fservices', { ...json, 'x-api-key': 'secret' }, list)
  t.equal(slash.status, 404)
})

t.test('c.req.path is the routed path', async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  const seen: string[] = []
  server.rest!.addMiddleware('*', (c, next) => {
    seen.push(c.req.path)
    return next()
  })
  const port = await listen(server.app)
  for (const target of ['/%61pi/services?x=1', 'http://localhost/api/services?x', '/api/serv%C3%A9ces', '/api/a%2Fb']) await rawRequest(port, 'POST', target, json, list)
  t.same(seen, ['/api/services', '/api/services', '/api/servéces', '/api/a%2Fb'])
  // A fragment after an absolute-form authority is a bad target: Fastify answers 400 before any hook.
  const bad = await rawRequest(port, 'POST', 'http://h.example/api/services#x', json, list)
  t.equal(bad.status, 400)
})

t.test('a case-insensitive router with merged slashes and ; as a delimiter: the guard matches what it routes', async (t) => {
  // A variable, not a literal: Fastify's routerOptions type omits useSemicolonDelimiter, which the router reads.
  const routerOptions = { caseSensitive: false, ignoreDuplicateSlashes: true, useSemicolonDelimiter: true }
  const server = await buildServer({ rest: { fastify: { routerOptions } } })
  t.teardown(() => server.close())
  server.rest!.addMiddleware('/api/services', apiKey)
  const port = await listen(server.app)
  for (const target of ['/API/services', '//api//services', '/Api/%53ervices', '/api/services;jsessionid=1']) {
    const answer = await rawRequest(port, 'POST', target, json, list)
    t.equal(answer.status, 401, target)
  }
})

t.test('addCors rules: an encoded path gets the stricter rule', async (t) => {
  const server = await buildServer({
    rest: {
      allowedOrigins: ['https://shop.example', 'https://admin.shop.example'],
      cors: { defaults: { credentials: true }, addCors: [{ path: '/admin/*', resolver: (origin) => origin === 'https://admin.shop.example' }] },
    },
  })
  t.teardown(() => server.close())
  server.app.get('/admin/users', async () => ({ users: ['ada'] }))
  const port = await listen(server.app)
  for (const target of ['/admin/users', '/%61dmin/users', '/admin/users#', 'http://localhost/admin/users']) {
    const answer = await rawRequest(port, 'GET', target, { origin: 'https://shop.example' })
    t.equal(answer.status, 200, target)
    t.equal(answer.headers['access-control-allow-origin'], undefined, `${target}: the shop may not read the admin route`)
    const preflight = await rawRequest(port, 'OPTIONS', target, { origin: 'https://shop.example', 'access-control-request-method': 'GET' })
    t.equal(preflight.headers['access-control-allow-origin'], undefined, `${target}: nor pass its preflight`)
  }
  const adminSite = await rawRequest(port, 'GET', '/%61dmin/users', { origin: 'https://admin.shop.example' })
  t.equal(adminSite.headers['access-control-allow-origin'], 'https://admin.shop.example')
})

t.test('the reference page gate decides by the matched route, not a .js suffix', async (t) => {
  for (const discovery of [{ enabled: true, secret: 'page-secret' }, { enabled: false }]) {
    const server = await buildServer({ rest: { discovery, openapi: { enabled: true } } })
    t.teardown(() => server.close())
    const port = await listen(server.app)
    for (const target of ['/api/reference/#.js', '/api/reference/?x=.js', '/api/reference/?#.js', '/api/reference#.js', '/api/refer%65nce/#.js']) {
      const answer = await rawRequest(port, 'GET', target)
      t.equal(answer.status, 403, `${target} (discovery ${discovery.enabled ? 'with a secret' : 'off'})`)
      t.equal(JSON.parse(answer.body).status, false)
      t.notMatch(answer.body, /tasks/, 'no document')
    }
    const script = await rawRequest(port, 'GET', '/api/reference/js/scalar.js')
    t.equal(script.status, 200, 'the script stays public')
  }
})

t.test('plugin mode: the same guards under a prefix', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyActions, {
    prefix: '/v1',
    serverName: 'plugin',
    services: [echoService],
    rest: { baseUrl: '/api', allowedOrigins: ['https://shop.example'], discovery: { enabled: true, secret: 's' }, openapi: { enabled: true }, cors: { addCors: [{ path: '/v1/api/services', resolver: () => false }] } },
  })
  getActions(app, '/v1').addMiddleware('/v1/api/*', apiKey)
  const port = await listen(app)
  for (const target of ['/v1/api/services', '/v%31/api/services', '/v1/%61pi/services', 'http://localhost/v1/api/services', '/v1/api/services#']) {
    const answer = await rawRequest(port, 'POST', target, { ...json, origin: 'https://shop.example' }, list)
    t.equal(answer.status, 401, target)
    t.same(JSON.parse(answer.body), refusedKey)
    t.equal(answer.headers['access-control-allow-origin'], undefined, `${target}: the CORS rule for the path applies`)
  }
  const page = await rawRequest(port, 'GET', '/v1/api/reference/#.js', { 'x-api-key': 'secret' })
  t.equal(page.status, 403)
})

t.test('a streaming action behind a path middleware: encoded and absolute-form targets meet it before the first byte', async (t) => {
  let runs = 0
  const ticks = createAction({
    name: 'ticks',
    description: 'Streams two ticks',
    handler: async function* () {
      runs++
      yield 1
      yield 2
    },
  })
  const live: Service = { name: 'live', description: 'Streams', actions: [ticks] }
  const server = await buildServer({ services: [live], rest: { openapi: { actionRoutes: true } } })
  t.teardown(() => server.close())
  server.rest!.addMiddleware('/api/services/live/*', (c, next) => (c.req.header('x-live') === 'yes' ? next() : c.json({ status: false, message: 'No streams', data: {} }, 403)))
  const port = await listen(server.app)
  const sse = { ...json, accept: 'text/event-stream' }
  for (const target of ['/api/services/live/ticks', '/api/services/%6Cive/ticks', '/%61pi/services/live/tick%73', 'http://localhost/api/services/live/ticks', '/api/services/live/ticks#x']) {
    const answer = await rawRequest(port, 'POST', target, sse, '{}')
    t.equal(answer.status, 403, `${target}: the middleware refuses, as JSON`)
    t.same(JSON.parse(answer.body), { status: false, message: 'No streams', data: {} })
  }
  t.equal(runs, 0, 'the generator never ran')
  const allowed = await rawRequest(port, 'POST', '/api/services/%6Cive/ticks', { ...sse, 'x-live': 'yes' }, '{}')
  t.equal(allowed.status, 200)
  t.match(allowed.body, /^retry: 3000\n\nid: 0\nevent: message\ndata: 1\n\nid: 1\nevent: message\ndata: 2\n\nid: end\nevent: done\n/)
})
