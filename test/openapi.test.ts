import t from 'tap'
import { Validator } from '@seriousme/openapi-schema-validator'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer, DEFAULTS, isActionsError, messages } from '../lib/index.js'
import { everythingServices } from './helpers/openapi.js'
import type { TapTest } from './helpers/postgres.js'
import { examplePglite } from './helpers/pglite.js'
import { buildServer } from './helpers/server.js'

const auth = { secret: 'a-secret-of-at-least-thirty-two-characters' }

async function validate(t: TapTest, document: unknown) {
  const result = await new Validator().validate(document as Record<string, unknown>)
  t.same(result, { valid: true }, 'valid OpenAPI 3.1')
}

t.test('the document of a fixture with every feature', async (t) => {
  const server = await buildServer({ services: everythingServices, auth, rest: { openapi: { enabled: true, servers: [{ url: 'http://localhost:8000' }], extra: { externalDocs: { url: 'https://example.com/docs' } } } } })
  t.teardown(() => server.close())
  const response = await server.app.inject({ method: 'GET', url: '/api/openapi.json' })
  t.equal(response.statusCode, 200)
  t.match(response.headers['content-type'], /^application\/json/)
  const document = response.json()
  await validate(t, document)

  t.equal(document.openapi, '3.1.0')
  t.same(document.info, { title: 'test-server', version: DEFAULTS.rest.openapiVersion })
  t.same(document.servers, [{ url: 'http://localhost:8000' }])
  t.same(document.externalDocs, { url: 'https://example.com/docs' })
  t.same(
    Object.keys(document.paths),
    ['/api/services', ...['echo', 'fails', 'throws', 'list'].map((a) => `/api/services/tasks/${a}`), ...['get', 'count', 'find', 'loose', 'me', 'avatar'].map((a) => `/api/services/people/${a}`)],
    'one path per visible action, plus the intent endpoint; the hidden action is absent',
  )
  t.notMatch(JSON.stringify(document), /Hidden from REST|people\/secret/)
  t.same(document.tags.map((tag: { name: string }) => tag.name), ['services', 'tasks', 'people'])

  const op = (path: string) => document.paths[path].post
  const get = op('/api/services/people/get')
  t.equal(get.operationId, 'people_get')
  t.equal(get.summary, 'One person by id (TypeBox input and output)')
  t.same(get.tags, ['people'])
  t.same(get.requestBody.content['application/json'].schema, { type: 'object', required: ['id'], properties: { id: { type: 'integer', minimum: 1 } } })
  t.same(get.responses['200'].content['application/json'].schema.properties.data, { type: 'object', required: ['id', 'name'], properties: { id: { type: 'integer' }, name: { type: 'string' } } })
  t.same(Object.keys(get.responses), ['200', '400', '403', '404', '413', '415', '500', '504'])
  t.same(get.security, [], 'a public action says it needs no security (linters ask every operation to say)')
  t.equal(get.description, "One person by id (TypeBox input and output)\n\nTakes the payload as its JSON body. Answers the envelope `{ status, message, data }`. The same as `{ intent: 'execute', service: 'people', action: 'get' }` on `POST /api/services`.")

  t.same(op('/api/services/people/count').responses['200'].content['application/json'].schema.properties.data, { type: 'object', properties: { result: { type: 'integer' } }, required: ['result'] }, 'a non-object output is data.result')
  const find = op('/api/services/people/find')
  t.match(find.requestBody.content['application/json'].schema, { type: 'object', properties: { name: { type: 'string', minLength: 1 } }, required: ['name'] }, 'Standard Schema input')
  t.equal(find.requestBody.content['application/json'].schema.$schema, undefined, 'no dialect inside the document')
  t.match(find.responses['200'].content['application/json'].schema.properties.data, { type: 'object', properties: { matches: { type: 'array', items: { type: 'string' } } } }, 'Standard Schema output')
  t.same(op('/api/services/people/loose').requestBody.content['application/json'].schema, { type: 'object', additionalProperties: true }, 'no schema: any object')
  const me = op('/api/services/people/me')
  t.same(me.security, [{ bearerAuth: [] }])
  t.ok(me.responses['401'], 'a protected action lists 401')
  t.same(document.components.securitySchemes, { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } })
  t.ok(op('/api/services/people/avatar').requestBody.content['multipart/form-data'], 'an upload action takes multipart')
  t.match(me.description, /Needs an authenticated caller\./)
  t.same(Object.keys(document.components.responses), ['Error400', 'Error401', 'Error403', 'Error404', 'Error413', 'Error415', 'Error500', 'Error504'], 'no Error429 without rate limiting: only components something refers to')
  t.same(Object.keys(document.components.schemas), ['Envelope', 'ErrorEnvelope', 'ExternalRequest'])
  const endpoint = op('/api/services')
  t.same(endpoint.requestBody.content, { 'application/json': { schema: { $ref: '#/components/schemas/ExternalRequest' } } }, 'JSON is the endpoint\'s one body, so generators send its Content-Type')
  t.match(endpoint.description, /`multipart\/form-data`/, 'the form is named in words, and documented on the upload action\'s own route')
  t.same(endpoint.security, [{}, { bearerAuth: [] }], 'anonymous or with a token')
  for (const [path, item] of Object.entries(document.paths) as Array<[string, { post: { description?: string; security?: unknown } }]>) {
    t.ok(item.post.description, `${path} has a description`)
    t.ok(Array.isArray(item.post.security), `${path} says its security`)
  }
})

t.test('servers, contact and license', async (t) => {
  t.test('by default the server is the origin that serves the document: the paths carry the base URL', async (t) => {
    const server = await buildServer({ services: everythingServices, rest: { openapi: { enabled: true } } })
    t.teardown(() => server.close())
    const document = (await server.app.inject({ method: 'GET', url: '/api/openapi.json' })).json()
    await validate(t, document)
    t.same(document.servers, [{ url: DEFAULTS.rest.openapiServerUrl, description: 'The server that serves this document' }])
    t.equal(document.info.contact, undefined, 'no contact unless given')
    t.equal(document.info.license, undefined, 'no license unless given')
    t.same(document.paths['/api/services'].post.security, [], 'no auth: every operation is public')
    t.equal(document.components.securitySchemes, undefined)
  })
  t.test('given ones are the document\'s', async (t) => {
    const contact = { name: 'API team', url: 'https://example.com/support', email: 'api@example.com' }
    const license = { name: 'Apache 2.0', identifier: 'Apache-2.0' }
    const server = await buildServer({ services: everythingServices, rest: { openapi: { enabled: true, servers: [{ url: 'https://api.example.com' }], info: { title: 'T', contact, license, 'x-logo': { url: 'https://example.com/logo.png' } } } } })
    t.teardown(() => server.close())
    const document = (await server.app.inject({ method: 'GET', url: '/api/openapi.json' })).json()
    await validate(t, document)
    t.same(document.servers, [{ url: 'https://api.example.com' }])
    t.same(document.info, { title: 'T', version: DEFAULTS.rest.openapiVersion, contact, license, 'x-logo': { url: 'https://example.com/logo.png' } })
  })
})

t.test('cookie auth and rate limits show in the document', async (t) => {
  const server = await buildServer({ services: everythingServices, auth: { ...auth, method: 'cookie', cookieName: 'sid' }, rest: { rateLimiting: { limitingHeader: 'x-client' }, openapi: { enabled: true } } })
  t.teardown(() => server.close())
  const document = (await server.app.inject({ method: 'GET', url: '/api/openapi.json' })).json()
  await validate(t, document)
  t.same(document.components.securitySchemes, { cookieAuth: { type: 'apiKey', in: 'cookie', name: 'sid', description: 'The JWT in a cookie' } })
  t.same(document.paths['/api/services/people/me'].post.security, [{ cookieAuth: [] }])
  t.ok(document.paths['/api/services/people/get'].post.responses['429'])
  t.ok(document.components.responses.Error429, 'rate limited: the 429 is referred to, so it is a component')
  t.same(document.paths['/api/services'].post.security, [{}, { cookieAuth: [] }])
})

t.test('the example app: a valid document with every visible action', async (t) => {
  const { createExample } = await import('../example/app.js')
  const attachments = mkdtempSync(join(tmpdir(), 'fastify-actions-openapi-'))
  t.teardown(() => rmSync(attachments, { recursive: true, force: true }))
  const example = await createExample({ PORT: '0', PGLITE_DIR: 'memory://', JWT_SECRET: 'openapi-test-secret', ATTACHMENTS_DIR: attachments }, { database: await examplePglite() })
  t.teardown(() => example.close())
  const app = example.server.rest!.app
  const response = await app.inject({ method: 'GET', url: '/api/openapi.json' })
  t.equal(response.statusCode, 200)
  const document = response.json()
  await validate(t, document)
  t.equal(document.info.title, 'fastify-actions example')
  const explored = (await app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'explore', service: '*', action: '*', payload: {} } })).json()
  const visible = explored.data.services.flatMap((s: { name: string; actions: string[] }) => s.actions.map((a) => `/api/services/${s.name}/${a}`))
  t.same(Object.keys(document.paths).sort(), ['/api/services', ...visible].sort(), 'exactly the actions explore lists')
  const page = await app.inject({ method: 'GET', url: '/api/reference/' })
  t.equal(page.statusCode, 200)
  t.match(page.body, /Scalar\.createApiReference/)
})

t.test('the gate: the schema intent\'s', async (t) => {
  t.test('off while discovery is off', async (t) => {
    const server = await buildServer({ services: everythingServices, rest: { discovery: { enabled: false }, openapi: { enabled: true } } })
    t.teardown(() => server.close())
    for (const url of ['/api/openapi.json', '/api/reference/', '/api/reference']) {
      const response = await server.app.inject({ method: 'GET', url })
      t.equal(response.statusCode, 403, url)
      t.same(response.json(), { status: false, message: messages.discoveryDisabled, data: {} })
    }
    const route = await server.app.inject({ method: 'POST', url: '/api/services/people/count', payload: {} })
    t.equal(route.statusCode, 200, 'the per-action routes exist all the same')
  })
  t.test('with a discovery secret: only with the secret, by header or query', async (t) => {
    const server = await buildServer({ services: everythingServices, rest: { discovery: { enabled: true, secret: 's3cret' }, openapi: { enabled: true } } })
    t.teardown(() => server.close())
    const refused = { status: false, message: messages.discoverySecret, data: {} }
    for (const [url, headers] of [
      ['/api/openapi.json', {}],
      ['/api/openapi.json', { 'x-discovery-secret': 'wrong' }],
      ['/api/openapi.json?discoverySecret=wrong', {}],
      ['/api/reference/', {}],
      ['/api/reference/openapi.json', {}],
    ] as const) {
      const response = await server.app.inject({ method: 'GET', url, headers })
      t.equal(response.statusCode, url === '/api/reference/openapi.json' ? 404 : 403, url)
      if (url !== '/api/reference/openapi.json') t.same(response.json(), refused)
    }
    t.equal((await server.app.inject({ method: 'GET', url: '/api/openapi.json', headers: { 'x-discovery-secret': 's3cret' } })).statusCode, 200)
    t.equal((await server.app.inject({ method: 'GET', url: '/api/openapi.json?discoverySecret=s3cret' })).statusCode, 200)
    const redirect = await server.app.inject({ method: 'GET', url: '/api/reference?discoverySecret=s3cret' })
    t.equal(redirect.statusCode, 302)
    t.equal(redirect.headers.location, '/api/reference/?discoverySecret=s3cret', 'the secret survives the redirect')
    const page = await server.app.inject({ method: 'GET', url: '/api/reference/?discoverySecret=s3cret' })
    t.equal(page.statusCode, 200)
    t.match(page.body, /One person by id/, 'the document is embedded in the page')
    t.equal((await server.app.inject({ method: 'GET', url: '/api/reference/js/scalar.js' })).statusCode, 200, 'the script is public')
  })
  t.test('public: true serves both without the secret', async (t) => {
    const server = await buildServer({ services: everythingServices, rest: { discovery: { enabled: true, secret: 's3cret' }, openapi: { enabled: true, public: true } } })
    t.teardown(() => server.close())
    t.equal((await server.app.inject({ method: 'GET', url: '/api/openapi.json' })).statusCode, 200)
    t.equal((await server.app.inject({ method: 'GET', url: '/api/reference/' })).statusCode, 200)
    const schema = await server.app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'schema', service: '*', action: '*', payload: {} } })
    t.equal(schema.statusCode, 403, 'the schema intent keeps its own secret')
  })
  t.test('off by default: no document, no page, no routes', async (t) => {
    const server = await buildServer({ services: everythingServices })
    t.teardown(() => server.close())
    for (const [method, url] of [['GET', '/api/openapi.json'], ['GET', '/api/reference/'], ['POST', '/api/services/people/count']] as const) {
      t.equal((await server.app.inject({ method, url })).statusCode, 404, url)
    }
  })
  t.test('paths of their own; reference off', async (t) => {
    const server = await buildServer({ services: everythingServices, rest: { openapi: { enabled: true, path: '/docs/api.json', reference: false } } })
    t.teardown(() => server.close())
    t.equal((await server.app.inject({ method: 'GET', url: '/docs/api.json' })).statusCode, 200)
    t.equal((await server.app.inject({ method: 'GET', url: '/api/reference/' })).statusCode, 404)
  })
})

t.test('configuration errors name the field', async (t) => {
  for (const [openapi, field] of [
    [{ enabled: 'yes' }, 'rest.openapi.enabled'],
    [{ enabled: true, actionRoutes: false }, 'rest.openapi.actionRoutes'],
    [{ enabled: true, servers: [{}] }, 'rest.openapi.servers'],
    [{ enabled: true, servers: [] }, 'rest.openapi.servers must be a non-empty array'],
    [{ enabled: true, version: '3.0' }, "rest.openapi.version must be '3.1' or '3.2', got '3.0'"],
    [{ enabled: true, info: { license: { url: 'https://x' } } }, 'rest.openapi.info.license must be an object with a name'],
    [{ enabled: true, info: { license: { name: 'MIT', identifier: 'MIT', url: 'https://x' } } }, 'rest.openapi.info.license takes an identifier or a url, not both'],
    [{ enabled: true, info: { contact: 'me' } }, 'rest.openapi.info.contact must be an object'],
    [{ enabled: true, info: { contact: { email: 42 } } }, 'rest.openapi.info.contact.email must be a string, got 42'],
    [{ enabled: true, info: { licence: { name: 'MIT' } } }, 'rest.openapi.info.licence is not an option; did you mean rest.openapi.info.license?'],
    [{ enabled: true, info: { contact: { mail: 'a@b.c' } } }, 'rest.openapi.info.contact.mail is not an option'],
    [{ enabled: true, path: 42 }, 'rest.openapi.path'],
    [{ enabled: true, public: 1 }, 'rest.openapi.public'],
  ] as const) {
    const error = await createServer({ serverName: 'x', services: everythingServices, forceNewInstance: true, logServices: false, rest: { baseUrl: '/api', allowedOrigins: [], openapi: openapi as never } }).then(
      () => undefined,
      (e: unknown) => e,
    )
    t.ok(isActionsError(error, 'FA_ERR_CONFIG'), field)
    t.match((error as Error).message, field)
  }
})

t.test('the schema intent: output schemas next to the input on request, the specification\'s shape otherwise', async (t) => {
  const server = await buildServer({ services: everythingServices })
  t.teardown(() => server.close())
  const ask = (payload: Record<string, unknown>) => server.app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'schema', service: 'people', action: 'get', payload } })
  t.same((await ask({})).json().data, { get: { type: 'object', required: ['id'], properties: { id: { type: 'integer', minimum: 1 } } } })
  t.same((await ask({ output: true })).json().data, {
    get: { input: { type: 'object', required: ['id'], properties: { id: { type: 'integer', minimum: 1 } } }, output: { type: 'object', required: ['id', 'name'], properties: { id: { type: 'integer' }, name: { type: 'string' } } } },
  })
  const all = (await server.app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'schema', service: '*', action: '*', payload: { output: true } } })).json()
  t.same(all.data.people.loose, { input: null, output: null })
  t.same(all.data.people.count.output, { type: 'integer' })
})

t.test('as a Fastify plugin under a prefix: the document names the prefixed paths', async (t) => {
  const Fastify = (await import('fastify')).default
  const { fastifyActions } = await import('../lib/index.js')
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyActions, {
    prefix: '/v1',
    serverName: 'plugged',
    services: everythingServices,
    logServices: false,
    rest: { baseUrl: '/api', allowedOrigins: [], discovery: { enabled: true, secret: 'k' }, openapi: { enabled: true } },
  } as never)
  const response = await app.inject({ method: 'GET', url: '/v1/api/openapi.json', headers: { 'x-discovery-secret': 'k' } })
  t.equal(response.statusCode, 200)
  const document = response.json()
  await validate(t, document)
  t.ok(document.paths['/v1/api/services/people/count'], 'prefixed action path')
  t.ok(document.paths['/v1/api/services'], 'prefixed intent endpoint')
  const count = await app.inject({ method: 'POST', url: '/v1/api/services/people/count', payload: {} })
  t.same(count.json(), { status: true, message: messages.executed('people', 'count'), data: { result: 3 } })
  const redirect = await app.inject({ method: 'GET', url: '/v1/api/reference?discoverySecret=k' })
  t.equal(redirect.statusCode, 302)
  t.equal(redirect.headers.location, '/v1/api/reference/?discoverySecret=k')
  t.equal((await app.inject({ method: 'GET', url: '/v1/api/reference/?discoverySecret=k' })).statusCode, 200)
})
