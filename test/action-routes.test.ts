import t from 'tap'
import { createAction, Err, getActions, messages, Ok, type Service } from '../lib/index.js'
import { echoService } from './helpers/fixtures.js'
import { everything } from './helpers/openapi.js'
import { buildServer } from './helpers/server.js'
import { filesService, pdf, png, uploadForm, type FormValue } from './helpers/uploads.js'

// Per-action routes run the very pipeline of `intent: execute`: every case goes through both the
// one endpoint and `POST /api/services/{service}/{action}`, and must get the same status and envelope.

const slow = createAction({ name: 'slow', description: 'Slower than its timeout', timeout: 20, handler: () => new Promise<never>(() => {}) })
const guarded = createAction({ name: 'guarded', description: 'Protected', isProtected: true, handler: (_data, context) => Ok({ user: context.getUser()?.userId ?? null }) })
const ping = createAction({ name: 'ping', description: 'Ping', handler: () => Ok('pong') })
const blocked = createAction({ name: 'blocked', description: 'Stopped by the global before handler', handler: () => Ok({ ran: true }) })
const other: Service = { name: 'other', description: 'Another service', actions: [ping, slow, guarded, blocked] }

interface Case {
  name: string
  service: string
  action: string
  /** A JSON payload (sent as the whole body on the route, as `payload` on the endpoint). */
  payload?: unknown
  /** A raw body sent as-is to both, with this content type. */
  raw?: { body: string; type: string; endpointBody?: string }
  /** A multipart form (the endpoint's copy carries the routing fields). */
  form?: Record<string, FormValue>
  headers?: Record<string, string>
  status: number
  body: unknown
}

const cases = (token: string): Case[] => [
  { name: 'Ok with an object becomes data', service: 'tasks', action: 'echo', payload: { title: 'a', count: 1 }, status: 200, body: { status: true, message: messages.executed('tasks', 'echo'), data: { title: 'a', count: 1 } } },
  { name: 'an array becomes data.result', service: 'tasks', action: 'list', payload: {}, status: 200, body: { status: true, message: messages.executed('tasks', 'list'), data: { result: [1, 2, 3] } } },
  { name: 'a primitive becomes data.result', service: 'other', action: 'ping', payload: {}, status: 200, body: { status: true, message: messages.executed('other', 'ping'), data: { result: 'pong' } } },
  { name: 'Err is a 400 with its text', service: 'tasks', action: 'fails', payload: {}, status: 400, body: { status: false, message: 'it failed', data: {} } },
  { name: 'a thrown handler is a 400 with the exception message', service: 'tasks', action: 'throws', payload: {}, status: 400, body: { status: false, message: 'handler exploded', data: {} } },
  {
    name: 'a failed validation is a 400 with data.errors',
    service: 'tasks',
    action: 'echo',
    payload: { title: '', count: 'x' },
    status: 400,
    body: {
      status: false,
      message: messages.validationFailed,
      data: { errors: [{ path: '/title', message: 'must not have fewer than 1 characters' }, { path: '/count', message: 'must be integer' }] },
    },
  },
  { name: 'the global before handler can refuse', service: 'other', action: 'blocked', payload: {}, status: 400, body: { status: false, message: 'blocked by policy', data: {} } },
  { name: 'an output schema drops undeclared fields', service: 'people', action: 'get', payload: { id: 7 }, status: 200, body: { status: true, message: messages.executed('people', 'get'), data: { id: 7, name: 'Ada' } } },
  { name: 'an application/*+json body is JSON', service: 'other', action: 'ping', raw: { body: '{}', type: 'application/vnd.api+json', endpointBody: JSON.stringify({ intent: 'execute', service: 'other', action: 'ping', payload: {} }) }, status: 200, body: { status: true, message: messages.executed('other', 'ping'), data: { result: 'pong' } } },
  { name: 'broken JSON is a 400', service: 'tasks', action: 'echo', raw: { body: '{"title":', type: 'application/json' }, status: 400, body: { status: false, message: messages.invalidBody, data: {} } },
  { name: 'text/plain is a 415', service: 'other', action: 'ping', raw: { body: '{}', type: 'text/plain', endpointBody: JSON.stringify({ intent: 'execute', service: 'other', action: 'ping', payload: {} }) }, status: 415, body: { status: false, message: messages.unsupportedMediaType, data: {} } },
  { name: 'a body over the body limit is a 413', service: 'tasks', action: 'echo', payload: { title: 'x'.repeat(5000), count: 1 }, status: 413, body: { status: false, message: messages.bodyTooLarge, data: {} } },
  { name: 'a timeout is a 504 with its message', service: 'other', action: 'slow', payload: {}, status: 504, body: { status: false, message: messages.actionTimedOut('other.slow', 20), data: {} } },
  { name: 'a protected action without a token is a 401', service: 'other', action: 'guarded', payload: {}, status: 401, body: { status: false, message: messages.authFailed(messages.authReasons.missingToken), data: {} } },
  { name: 'a protected action with a token runs', service: 'other', action: 'guarded', payload: {}, headers: { authorization: `Bearer ${token}` }, status: 200, body: { status: true, message: messages.executed('other', 'guarded'), data: { user: 'u1' } } },
  { name: 'enforceContentType: JSON to an upload action is a 415', service: 'files', action: 'flat', payload: {}, status: 415, body: { status: false, message: messages.unsupportedMediaType, data: {} } },
  {
    name: 'an upload (multipart) runs with its files',
    service: 'files',
    action: 'flat',
    form: { note: 'hi', doc: pdf() },
    status: 200,
    body: { status: true, message: messages.executed('files', 'flat'), data: { fields: { note: 'hi' }, files: { doc: { name: 'a.pdf', type: 'application/pdf', size: 14, text: '%PDF-1.4 hello' } } } },
  },
  {
    name: 'a refused upload keeps its upload envelope',
    service: 'files',
    action: 'flat',
    form: { doc: png('a.gif') },
    status: 400,
    body: { status: false, message: messages.fileTypeNotAllowed, data: { error_category: 'validation', rejected: [{ name: 'a.gif', type: 'image/png' }], allowed: { mimeTypes: ['image/png', 'image/jpeg', 'application/pdf'], extensions: ['.png', '.jpg', '.jpeg', '.pdf'] } } },
  },
]

t.test('per-action routes answer exactly as intent: execute', async (t) => {
  const server = await buildServer({
    services: [echoService, other, everything, filesService],
    auth: { secret: 'a-secret-of-at-least-thirty-two-characters' },
    rest: { bodyLimit: 4096, uploads: { enforceContentType: true }, openapi: { actionRoutes: true } },
    onBeforeActionHandler: ({ action }) => (action.name === 'blocked' ? Err('blocked by policy') : Ok(null)),
  })
  t.teardown(() => server.close())
  const { app } = server
  const token = getActions(app).jwt!.sign({ sub: 'u1' })

  for (const c of cases(token)) {
    t.test(c.name, async (t) => {
      const send = async (url: string, body: BodyInit | undefined, headers: Record<string, string>) => {
        const response = await app.fetch(url, { method: 'POST', headers: { ...headers, ...c.headers }, body })
        return { status: response.status, body: await response.json() }
      }
      let viaEndpoint, viaRoute
      const route = `/api/services/${c.service}/${c.action}`
      if (c.form) {
        viaEndpoint = await send('/api/services', uploadForm(c.action, c.form, { service: c.service }), {})
        viaRoute = await send(route, entriesForm(c.form), {})
      } else if (c.raw) {
        viaEndpoint = await send('/api/services', c.raw.endpointBody ?? c.raw.body, { 'content-type': c.raw.type })
        viaRoute = await send(route, c.raw.body, { 'content-type': c.raw.type })
      } else {
        viaEndpoint = await send('/api/services', JSON.stringify({ intent: 'execute', service: c.service, action: c.action, payload: c.payload }), { 'content-type': 'application/json' })
        viaRoute = await send(route, JSON.stringify(c.payload), { 'content-type': 'application/json' })
      }
      t.same(viaEndpoint, { status: c.status, body: c.body }, 'the one endpoint')
      t.same(viaRoute, { status: c.status, body: c.body }, 'the per-action route')
    })
  }

  t.test('a route without a body, or with JSON null, is refused as the endpoint refuses it; {} runs', async (t) => {
    const refused = { status: false, message: messages.invalidBody, data: {} }
    for (const [name, options] of [
      ['no body, no content type', {}],
      ['no body, a JSON content type', { headers: { 'content-type': 'application/json' } }],
      ['JSON null', { headers: { 'content-type': 'application/json' }, payload: 'null' }],
    ] as const) {
      const response = await app.inject({ method: 'POST', url: '/api/services/other/ping', ...options })
      t.equal(response.statusCode, 400, name)
      t.same(response.json(), refused, name)
    }
    const upload = await app.inject({ method: 'POST', url: '/api/services/files/flat' })
    t.equal(upload.statusCode, 400, 'an upload action without its form does not run')
    t.same(upload.json(), refused)
    const empty = await app.inject({ method: 'POST', url: '/api/services/other/ping', payload: {} })
    t.equal(empty.statusCode, 200, 'an action without input takes {}')
    t.same(empty.json(), { status: true, message: messages.executed('other', 'ping'), data: { result: 'pong' } })
  })
  t.test('a body that is not an object is a 400 naming /payload', async (t) => {
    const response = await app.inject({ method: 'POST', url: '/api/services/other/ping', headers: { 'content-type': 'application/json' }, payload: '[1]' })
    t.equal(response.statusCode, 400)
    t.same(response.json(), { status: false, message: messages.invalidRequest, data: { errors: [{ path: '/payload', message: 'must be an object' }] } })
  })
  t.test('hidden actions have no route: only the one endpoint runs them', async (t) => {
    const response = await app.inject({ method: 'POST', url: '/api/services/people/secret', payload: {} })
    t.equal(response.statusCode, 404)
    t.same(response.json(), { status: false, message: messages.routeNotFound('/api'), data: {} })
    const viaEndpoint = await app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'execute', service: 'people', action: 'secret', payload: {} } })
    t.equal(viaEndpoint.statusCode, 200)
  })
  t.test('an unknown action has no route: the 404 envelope', async (t) => {
    const response = await app.inject({ method: 'POST', url: '/api/services/tasks/nope', payload: {} })
    t.equal(response.statusCode, 404)
    t.equal(response.json().status, false)
  })
})

t.test('the rate limit covers the routes as it covers the endpoint', async (t) => {
  const server = await buildServer({ services: [other], rest: { rateLimiting: { limitingHeader: 'x-client', limit: 1, windowMs: 60_000 }, openapi: { actionRoutes: true } } })
  t.teardown(() => server.close())
  const headers = { 'x-client': 'c1' }
  const first = await server.app.inject({ method: 'POST', url: '/api/services/other/ping', headers, payload: {} })
  t.equal(first.statusCode, 200)
  for (const url of ['/api/services/other/ping', '/api/services']) {
    const refused = await server.app.inject({ method: 'POST', url, headers, payload: { intent: 'execute', service: 'other', action: 'ping', payload: {} } })
    t.equal(refused.statusCode, 429, url)
    t.match(refused.json(), { status: false, message: /^Rate limit exceeded, retry in \d+ seconds$/, data: {} })
  }
})

t.test('without the option there are no per-action routes', async (t) => {
  const server = await buildServer({ services: [other] })
  t.teardown(() => server.close())
  const response = await server.app.inject({ method: 'POST', url: '/api/services/other/ping', payload: {} })
  t.equal(response.statusCode, 404)
})

/** The form of a per-action route: no routing fields. */
function entriesForm(entries: Record<string, FormValue>): FormData {
  const form = new FormData()
  for (const [name, value] of Object.entries(entries)) for (const item of Array.isArray(value) ? value : [value]) form.append(name, item)
  return form
}

