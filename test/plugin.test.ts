import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fastifyActions, {
  createAction,
  Err,
  getActions,
  getContext,
  messages,
  Ok,
  fastifyActions as namedExport,
  type ServerConfig,
  type Service,
} from '../lib/index.js'
import { echoService } from './helpers/fixtures.js'

const whoami = createAction({
  name: 'whoami',
  description: 'Which registration and user serve me',
  isProtected: true,
  handler: (_data, context) => Ok({ server: context.get('name'), user: context.getUser()?.userId ?? null, same: getContext() === context }),
})
const named = (name: string): Service => ({ name: 'who', description: 'Who', actions: [whoami, createAction({ name: 'name', description: '', handler: (_d, c) => Ok({ name: c.get('name') }) })] })

function config(serverName: string, extra: Partial<ServerConfig> = {}): ServerConfig {
  return {
    serverName,
    logServices: false,
    services: [echoService, named(serverName)],
    rest: { baseUrl: '/api', allowedOrigins: ['https://allowed.example'], enableStatus: true, discovery: { enabled: true } },
    onBoot: { fn: (context) => (context.set('name', serverName), Ok(null)) },
    ...extra,
  }
}

const execute = (app: FastifyInstance, url: string, service: string, action: string, payload: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, payload: { intent: 'execute', service, action, payload }, headers })

/** A user's own app: its routes, its own parser use, its own error format. */
function userApp(): FastifyInstance {
  const app = Fastify()
  app.get('/mine', async () => ({ mine: true }))
  app.post('/text', async (request) => ({ got: request.body }))
  app.get('/boom', async () => {
    throw Object.assign(new Error('teapot'), { statusCode: 418 })
  })
  return app
}

t.test('the plugin is the default and a named export', async (t) => {
  t.equal(fastifyActions, namedExport)
})

t.test('registered with a prefix next to the user routes', async (t) => {
  const app = userApp()
  t.teardown(() => app.close())
  await app.register(fastifyActions, { ...config('one'), prefix: '/v1' })

  const ok = await execute(app, '/v1/api/services', 'tasks', 'echo', { title: 'a', count: 1 }, { origin: 'https://allowed.example' })
  t.equal(ok.statusCode, 200)
  t.same(ok.json(), { status: true, message: messages.executed('tasks', 'echo'), data: { title: 'a', count: 1 } })
  t.equal(ok.headers['access-control-allow-origin'], 'https://allowed.example', 'CORS on its own routes')

  const invalid = await execute(app, '/v1/api/services', 'tasks', 'echo', { title: '' })
  t.equal(invalid.statusCode, 400)
  t.equal(invalid.json().message, messages.validationFailed)

  const status = await app.inject('/v1/status')
  t.same([status.statusCode, status.json()], [200, { status: true, message: 'one is running', data: {} }], '/status under the prefix')
  t.equal((await app.inject('/status')).statusCode, 404)

  const missing = await app.inject('/v1/nope')
  t.same([missing.statusCode, missing.json()], [404, { status: false, message: messages.routeNotFound('/v1/api'), data: {} }], 'the 404 names the prefixed URL')

  // The user's own routes behave exactly as before.
  const mine = await app.inject({ url: '/mine', headers: { origin: 'https://allowed.example' } })
  t.same([mine.statusCode, mine.json()], [200, { mine: true }])
  t.equal(mine.headers['access-control-allow-origin'], undefined, 'no CORS on the user routes')
  const text = await app.inject({ method: 'POST', url: '/text', payload: 'hi', headers: { 'content-type': 'text/plain' } })
  t.same([text.statusCode, text.json()], [200, { got: 'hi' }], 'text/plain still parsed for the user routes')
  const boom = await app.inject('/boom')
  t.same([boom.statusCode, boom.json()], [418, { statusCode: 418, error: "I'm a Teapot", message: 'teapot' }], "Fastify's own error format stays")
  const outside = await app.inject('/elsewhere')
  t.equal(outside.json().error, 'Not Found', "Fastify's own 404 outside the prefix")

  const handle = getActions(app, '/v1')
  t.equal(handle.prefix, '/v1')
  t.equal(handle.context.get('name'), 'one', 'onBoot ran with this registration’s context')
  const fetched = await handle.fetch('/v1/api/services', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ intent: 'execute', service: 'tasks', action: 'list', payload: {} }),
  })
  t.same([fetched.status, await fetched.json()], [200, { status: true, message: messages.executed('tasks', 'list'), data: { result: [1, 2, 3] } }])
})

t.test('a body over the limit answers the 413 envelope on the plugin routes only', async (t) => {
  const app = userApp()
  t.teardown(() => app.close())
  await app.register(fastifyActions, { ...config('limited', { rest: { baseUrl: '/api', allowedOrigins: [], bodyLimit: 64 } }), prefix: '/v1' })
  const big = await execute(app, '/v1/api/services', 'tasks', 'echo', { title: 'x'.repeat(200), count: 1 })
  t.same([big.statusCode, big.json()], [413, { status: false, message: messages.bodyTooLarge, data: {} }])
  const mine = await app.inject({ method: 'POST', url: '/text', payload: 'x'.repeat(200), headers: { 'content-type': 'text/plain' } })
  t.equal(mine.statusCode, 200, "the user's routes keep Fastify's own body limit")
})

t.test('two registrations side by side, each with its own engine, context, auth and multipart', async (t) => {
  const app = userApp()
  t.teardown(() => app.close())
  const secret = 'x'.repeat(32)
  const withUploads = (name: string) => config(name, { auth: { secret: `${secret}${name}` } })
  await app.register(fastifyActions, { ...withUploads('one'), prefix: '/v1' })
  await app.register(fastifyActions, { ...withUploads('two'), prefix: '/v2' })
  await app.ready()

  const one = getActions(app, '/v1')
  const two = getActions(app, '/v2')
  t.not(one.engine, two.engine)
  t.not(one.context, two.context)

  const named1 = await execute(app, '/v1/api/services', 'who', 'name')
  const named2 = await execute(app, '/v2/api/services', 'who', 'name')
  t.same([named1.json().data, named2.json().data], [{ name: 'one' }, { name: 'two' }])

  t.ok(one.jwt && two.jwt, 'each registration has its own signer')
  const token1 = one.jwt!.sign({ sub: 'ada' })
  const claims1 = one.jwt!.verify<{ iat: number; exp: number }>(token1)
  t.same(claims1, { sub: 'ada', iat: claims1.iat, exp: claims1.iat + 3600 }, 'auth.expiresIn defaults to one hour')
  t.throws(() => two.jwt!.verify(token1))
  const who1 = await execute(app, '/v1/api/services', 'who', 'whoami', {}, { authorization: `Bearer ${token1}` })
  t.same([who1.statusCode, who1.json().data], [200, { server: 'one', user: 'ada', same: true }], 'getContext() in a request is the serving registration’s')
  const crossed = await execute(app, '/v2/api/services', 'who', 'whoami', {}, { authorization: `Bearer ${token1}` })
  t.same([crossed.statusCode, crossed.json()], [401, { status: false, message: messages.authFailed(messages.authReasons.signature), data: {} }], 'a token of one registration is not valid at the other')

  // Multipart on both: the router-wide constraint is added once.
  for (const prefix of ['/v1', '/v2']) {
    const form = new FormData()
    form.append('intent', 'execute')
    form.append('service', 'tasks')
    form.append('action', 'list')
    const response = await one.fetch(`${prefix}/api/services`, { method: 'POST', body: form })
    t.equal(response.status, 200, `${prefix} multipart`)
  }
})

t.test('an onBoot failure rejects ready() with a coded error and the process lives', async (t) => {
  for (const [fn, code, message] of [
    [() => Err('database unreachable'), 'FA_ERR_BOOT_FAILED', 'onBoot failed: database unreachable'],
    [() => {
      throw new Error('exploded')
    }, 'FA_ERR_BOOT_FAILED', 'onBoot failed: exploded'],
    [() => new Promise(() => {}), 'FA_ERR_BOOT_TIMEOUT', 'onBoot timed out after 50ms (raise onBoot.maxWaitTime if the start needs longer)'],
    // A step that blocks the event loop past the limit, then succeeds: still a timeout.
    [() => {
      const until = performance.now() + 200
      while (performance.now() < until);
      return Ok(null)
    }, 'FA_ERR_BOOT_TIMEOUT', 'onBoot timed out after 50ms (raise onBoot.maxWaitTime if the start needs longer)'],
  ] as const) {
    const app = Fastify()
    app.register(fastifyActions, config('bad', { onBoot: { fn: fn as never, maxWaitTime: 50 } }))
    await t.rejects(async () => { await app.ready() }, { code, message })
    await app.close()
  }
})

t.test("onBoot's deadline fits under Fastify's pluginTimeout", async (t) => {
  const tooLong = Fastify()
  tooLong.register(fastifyActions, config('slow', { onBoot: { fn: () => Ok(null), maxWaitTime: 20_000 } }))
  await t.rejects(async () => { await tooLong.ready() }, { code: 'FA_ERR_CONFIG', message: /onBoot\.maxWaitTime \(20000 ms\) must be shorter than Fastify's pluginTimeout \(10000 ms\)/ })
  await tooLong.close()

  const roomy = Fastify({ pluginTimeout: 30_000 })
  await roomy.register(fastifyActions, config('roomy', { onBoot: { fn: () => Ok(null), maxWaitTime: 20_000 } }))
  t.equal(getActions(roomy).config.onBoot?.maxWaitTime, 20_000)
  await roomy.close()

  const defaulted = Fastify()
  await defaulted.register(fastifyActions, config('defaulted'))
  t.equal(getActions(defaulted).config.onBoot?.maxWaitTime, 9_900, 'the default deadline is kept just under pluginTimeout')
  await defaulted.close()
})

t.test('getActions before registration is a coded error', async (t) => {
  const app = Fastify()
  t.throws(() => getActions(app, '/v1'), { code: 'FA_ERR_NOT_REGISTERED' })
  t.throws(() => getActions(app), { code: 'FA_ERR_NOT_REGISTERED' })
  await app.close()
})

t.test('registered without a prefix, the app keeps its own 404 handler', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ mine: '404' }))
  await app.register(fastifyActions, config('root'))
  t.same((await app.inject('/nowhere')).json(), { mine: '404' })
  const ok = await execute(app, '/api/services', 'tasks', 'list')
  t.equal(ok.statusCode, 200)
})

t.test('static files and status under the prefix', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fa-plugin-static-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  mkdirSync(join(dir, 'public'))
  writeFileSync(join(dir, 'public', 'hello.txt'), 'hello')
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyActions, { ...config('files', { rest: { baseUrl: '/api', allowedOrigins: [], enableStatic: true, staticDir: join(dir, 'public') } }), prefix: '/v1' })
  const file = await app.inject('/v1/assets/hello.txt')
  t.same([file.statusCode, file.body], [200, 'hello'])
  t.equal((await app.inject('/assets/hello.txt')).statusCode, 404)
})

t.test('without rest the plugin serves the services endpoint at the prefix root', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyActions, { serverName: 'bare', logServices: false, services: [echoService], prefix: '/rpc' })
  const ok = await execute(app, '/rpc/services', 'tasks', 'list')
  t.same([ok.statusCode, ok.json().data], [200, { result: [1, 2, 3] }])
})
