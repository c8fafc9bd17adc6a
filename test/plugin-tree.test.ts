/**
 * The Fastify-native shape: each concern is a named plugin (`fastify-actions-<concern>`) registered
 * in a fixed order, so `app.printPlugins()` and `app.hasPlugin()` know it; a concern registered
 * before what it needs fails at boot with Fastify's own error; the engine and the context are
 * decorated (`app.engine`, `app.serverContext`, or `app.actions[name]` for named registrations).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import Type from 'typebox'
import { createAction, createServer, fastifyActions, getActions, Ok, type ServerConfig } from '../lib/index.js'
import { servicesPlugin } from '../plugins/services.js'
import { everyOptionConfig } from './helpers/every-option.js'

const echo = createAction({
  name: 'echo',
  description: 'Echoes its text',
  validation: Type.Object({ text: Type.String() }),
  handler: (data) => Ok({ text: data.text }),
})
const services = [{ name: 'demo', description: 'Demo', actions: [echo] }]

/** Every optional concern on. */
function everything(staticDir: string): ServerConfig {
  return { ...everyOptionConfig({ serverName: 'tree', services, staticDir, allowedOrigins: ['https://app.example'] }), forceNewInstance: true }
}

/** The documented order of the concerns (docs/architecture.md). */
const ORDER = [
  'fastify-actions-errors',
  'fastify-actions-request-scope',
  'fastify-actions-hosts',
  'fastify-actions-cors',
  'fastify-actions-load-shedding',
  'fastify-actions-rate-limit',
  'fastify-actions-static',
  'fastify-actions-middleware',
  'fastify-actions-auth',
  'fastify-actions-services',
  'fastify-actions-uploads',
  'fastify-actions-openapi',
  'fastify-actions-reference',
  'fastify-actions-mcp',
  'fastify-actions-status',
]

/** The `fastify-actions…` names of `printPlugins()`, in the order printed, with their indentation. */
function concerns(tree: string): Array<{ name: string; depth: number }> {
  return tree.split('\n').flatMap((line) => {
    const found = /^([\s│├└─┬]*)(fastify-actions[\w-]*)/.exec(line)
    return found ? [{ name: found[2]!, depth: found[1]!.length }] : []
  })
}

async function staticDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plugin-tree-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

t.test('printPlugins of a createServer app lists every concern by name, in the documented order', async (t) => {
  const server = await createServer(everything(await staticDir(t)))
  t.teardown(() => server.close())
  await server.rest!.app.ready()
  const names = concerns(server.rest!.app.printPlugins()).map((entry) => entry.name)
  t.same(names, ORDER)
  // Uploads live inside the services plugin's own context: the root knows the others.
  for (const name of ORDER.filter((n) => n !== 'fastify-actions-uploads')) t.ok(server.rest!.app.hasPlugin(name), `hasPlugin('${name}')`)
})

t.test('optional concerns that are off are not registered', async (t) => {
  const server = await createServer({ serverName: 'small', logServices: false, forceNewInstance: true, services, rest: { baseUrl: '/api', allowedOrigins: [] } })
  t.teardown(() => server.close())
  await server.rest!.app.ready()
  t.same(
    concerns(server.rest!.app.printPlugins()).map((entry) => entry.name),
    ['fastify-actions-errors', 'fastify-actions-request-scope', 'fastify-actions-hosts', 'fastify-actions-cors', 'fastify-actions-middleware', 'fastify-actions-services', 'fastify-actions-uploads'],
  )
  t.notOk(server.rest!.app.hasPlugin('fastify-actions-auth'))
})

t.test('in plugin mode the concerns appear under the registration', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  app.get('/mine', async () => ({ mine: true }))
  await app.register(fastifyActions, { ...everything(await staticDir(t)), prefix: '/v1' })
  await app.ready()
  const entries = concerns(app.printPlugins())
  t.equal(entries[0]!.name, 'fastify-actions', 'the registration first')
  t.same(entries.slice(1).map((entry) => entry.name), ['fastify-actions-routes', ...ORDER])
  const below = entries.slice(2)
  t.ok(below.every((entry) => entry.depth > entries[0]!.depth), 'every concern is nested under the registration')
  t.ok(app.hasPlugin('fastify-actions'))
  // The host's own route keeps none of the registration's hooks (no CORS headers).
  const mine = await app.inject({ method: 'GET', url: '/mine', headers: { origin: 'https://app.example' } })
  t.equal(mine.headers['access-control-allow-origin'], undefined)
})

t.test('a concern registered before the ones it needs fails at boot with Fastify\'s own error', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  const engine = (await createServer({ serverName: 'e', logServices: false, forceNewInstance: true, services })).engine
  app.register(servicesPlugin, { engine, context: {} as never, baseUrl: '/api', discovery: { enabled: true }, bodyLimit: 1024, maxDepth: 8 })
  await t.rejects(async () => { await app.ready() }, { code: 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED', message: /fastify-actions-errors/ })
})

t.test("createServer's app: a custom route plugin reaches fastify.engine and fastify.serverContext", async (t) => {
  const server = await createServer({ serverName: 'deco', logServices: false, forceNewInstance: true, services, rest: { baseUrl: '/api', allowedOrigins: [] } })
  t.teardown(() => server.close())
  const app = server.rest.app
  t.equal(app.engine, server.engine, 'app.engine is the engine createServer returns')
  t.equal(app.serverContext, server.context, 'app.serverContext is the context createServer returns')
  await app.register(async (fastify: FastifyInstance) => {
    fastify.post<{ Body: { text: string } }>('/custom/echo', async (request) => {
      const result = await fastify.engine.executeAction('demo', 'echo', { text: request.body.text }, fastify.serverContext)
      return result.ok ? { via: 'custom', ...(result.value as object) } : { error: result.error }
    })
  })
  const response = await app.inject({ method: 'POST', url: '/custom/echo', payload: { text: 'hi' } })
  t.equal(response.statusCode, 200)
  t.same(response.json(), { via: 'custom', text: 'hi' })
})

t.test('plugin mode: one registration decorates the context it is registered in', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyActions, { serverName: 'one', logServices: false, services, rest: { baseUrl: '/api', allowedOrigins: [] }, prefix: '/v1' })
  t.equal(app.engine, getActions(app, '/v1').engine)
  t.equal(app.serverContext, getActions(app, '/v1').context)
  app.get('/host/echo', async () => app.engine.executeAction('demo', 'echo', { text: 'from host' }, app.serverContext))
  const response = await app.inject({ method: 'GET', url: '/host/echo' })
  t.same(response.json(), { ok: true, value: { text: 'from host' } })
})

t.test('plugin mode: named registrations are decorated under app.actions[name]', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  const base = { logServices: false, services, rest: { baseUrl: '/api', allowedOrigins: [] } }
  await app.register(fastifyActions, { ...base, serverName: 'one', name: 'v1', prefix: '/v1' })
  await app.register(fastifyActions, { ...base, serverName: 'two', name: 'v2', prefix: '/v2' })
  t.equal(app.actions.v1!.engine, getActions(app, '/v1').engine)
  t.equal(app.actions.v2!.engine, getActions(app, '/v2').engine)
  t.not(app.actions.v1!.engine, app.actions.v2!.engine, 'each its own engine')
  t.equal(app.actions.v2!.serverContext, getActions(app, '/v2').context)
  t.notOk(app.hasDecorator('engine'), 'named registrations leave app.engine alone')
  t.ok(Object.isFrozen(app.actions.v1))
})

t.test('plugin mode: a second registration without a name leaves app.engine to the first and says so', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  const warnings: string[] = []
  const base = { services, rest: { baseUrl: '/api', allowedOrigins: [] }, resources: { logger: { info: () => '', error: () => '', warn: ({ message }: { message: string }) => (warnings.push(message), '') } } }
  await app.register(fastifyActions, { ...base, serverName: 'one', prefix: '/v1' })
  await app.register(fastifyActions, { ...base, serverName: 'two', prefix: '/v2' })
  t.equal(app.engine, getActions(app, '/v1').engine)
  t.not(getActions(app, '/v2').engine, app.engine)
  t.match(warnings, [/a second registration without a name: app\.engine and app\.serverContext stay the first registration's/])
})

t.test('plugin mode: a clash is refused at registration with FA_ERR_CONFIG', async (t) => {
  const base = { logServices: false, services, rest: { baseUrl: '/api', allowedOrigins: [] } }

  const sameName = Fastify()
  t.teardown(() => sameName.close())
  await sameName.register(fastifyActions, { ...base, serverName: 'one', name: 'v1', prefix: '/a' })
  await t.rejects(async () => sameName.register(fastifyActions, { ...base, serverName: 'two', name: 'v1', prefix: '/b' }), {
    code: 'FA_ERR_CONFIG',
    message: "fastify-actions: a registration named 'v1' already exists on this app: names must be unique",
  })

  const foreign = Fastify()
  t.teardown(() => foreign.close())
  foreign.decorate('engine', { mine: true } as never)
  await t.rejects(async () => foreign.register(fastifyActions, { ...base, serverName: 'one' }), {
    code: 'FA_ERR_CONFIG',
    message: 'fastify-actions: this app already has an `engine` or `serverContext` decorator from another plugin: register fastify-actions with a `name` (app.actions[name])',
  })

  const badName = Fastify()
  t.teardown(() => badName.close())
  await t.rejects(async () => badName.register(fastifyActions, { ...base, serverName: 'one', name: 'v-1' }), {
    code: 'FA_ERR_CONFIG',
    message: 'fastify-actions: name must be an identifier (letters, digits, _ or $), got "v-1"',
  })
})
