/**
 * Configuration mistakes are refused at boot with FA_ERR_CONFIG naming the field: an unknown key
 * (with the nearest known one), a port that is not one, a number that is NaN.
 */
import Fastify from 'fastify'
import t from 'tap'
import { createAction, createServer, fastifyActions, getActions, Ok } from '../lib/index.js'
import { nearestKey } from '../lib/config-keys.js'

const ping = createAction({ name: 'ping', description: '', handler: () => Ok({ pong: true }) })
const base = { serverName: 'keys', logServices: false, forceNewInstance: true, services: [{ name: 'health', description: '', actions: [ping] }] }
const rest = { baseUrl: '/api', allowedOrigins: [] }

t.test('an unknown key is refused with the nearest known one, at any depth', async (t) => {
  for (const [config, message] of [
    [{ rest: { ...rest, baseurl: '/x' } }, 'createServer: rest.baseurl is not an option; did you mean rest.baseUrl?'],
    [{ rest: { ...rest, hsot: 'localhost' } }, 'createServer: rest.hsot is not an option; did you mean rest.host?'],
    [{ servername: 'x' }, 'createServer: servername is not an option; did you mean serverName?'],
    [{ rest: { ...rest, openapi: { enabled: true, refrence: false } } }, 'createServer: rest.openapi.refrence is not an option; did you mean rest.openapi.reference?'],
    [{ rest: { ...rest, uploads: { limits: { maxFileSise: 1 } } } }, 'createServer: rest.uploads.limits.maxFileSise is not an option; did you mean rest.uploads.limits.maxFileSize?'],
    [{ rest: { ...rest, rateLimiting: { limitingHeader: 'x-api-key', windowMS: 1000 } } }, 'createServer: rest.rateLimiting.windowMS is not an option; did you mean rest.rateLimiting.windowMs?'],
    [{ auth: { secret: 's'.repeat(32), cookies: {} } }, 'createServer: auth.cookies is not an option; did you mean auth.cookie?'],
    [{ onBoot: { fn: () => Ok(null), maxWait: 10 } }, 'createServer: onBoot.maxWait is not an option (onBoot takes fn, maxWaitTime)'],
  ] as const) {
    await t.rejects(createServer({ ...base, ...(config as object) } as never), { code: 'FA_ERR_CONFIG', message }, message)
  }
})

t.test('open objects are taken as they are: Fastify options, OpenAPI info and extra, resources', async (t) => {
  const server = await createServer({
    ...base,
    resources: { anything: 1 } as never,
    rest: { ...rest, fastify: { logger: false, caseSensitive: true }, openapi: { enabled: true, info: { title: 't', 'x-logo': {} }, extra: { tags: [] } } },
  })
  await server.close()
  t.pass()
})

t.test('the plugin takes its registration options and refuses an unknown key the same way', async (t) => {
  const ok = Fastify()
  await ok.register(fastifyActions, { ...base, name: 'one', prefix: '/v1', logLevel: 'warn', rest } as never)
  await ok.close()
  const bad = Fastify()
  await t.rejects(async () => bad.register(fastifyActions, { ...base, rest: { ...rest, enableStatuss: true } } as never).ready(), {
    code: 'FA_ERR_CONFIG',
    message: 'createServer: rest.enableStatuss is not an option; did you mean rest.enableStatus?',
  })
  await bad.close()
})

t.test('a key far from every known one lists the known keys', async (t) => {
  await t.rejects(createServer({ ...base, rest: { ...rest, streams: { wholeLife: 1 } } } as never), {
    code: 'FA_ERR_CONFIG',
    message: 'createServer: rest.streams.wholeLife is not an option (rest.streams takes keepAlive, maxDuration, maxPerClient, endTimeout)',
  })
  // The keys and the resolver live with the SSE adapter (plugins/stream-config.ts); the check reads them there.
  await t.rejects(createServer({ ...base, rest: { ...rest, streams: { keepAlive: 0 } } } as never), { code: 'FA_ERR_CONFIG', message: /rest\.streams\.keepAlive/ })
  const streams = await createServer({ ...base, rest: { ...rest, streams: { keepAlive: 1000 } } } as never)
  t.same(getActions(streams.rest!.app).config.rest?.streams, { keepAlive: 1000, maxDuration: 3_600_000, maxPerClient: 32, endTimeout: 5_000 }, 'the defaults fill the rest')
  await streams.close()
  t.equal(nearestKey('zzzzzz', ['host', 'port']), undefined)
  t.equal(nearestKey('PORT', ['host', 'port']), 'port')
})

t.test('rest.port is an integer from 0 to 65535; rest.host a non-empty string', async (t) => {
  for (const [port, got] of [['eight', "'eight'"], [Number('abc'), 'NaN'], [-1, '-1'], [65536, '65536'], [80.5, '80.5']] as const) {
    await t.rejects(createServer({ ...base, rest: { ...rest, port: port as never } }), { code: 'FA_ERR_CONFIG', message: `createServer: rest.port must be an integer from 0 to 65535, got ${got}` })
  }
  for (const port of [0, 65535]) {
    const server = await createServer({ ...base, rest: { ...rest, port } })
    t.equal(server.rest.config.port, port)
    await server.close()
  }
  await t.rejects(createServer({ ...base, rest: { ...rest, host: '' } }), { code: 'FA_ERR_CONFIG', message: "createServer: rest.host must be a host name or address, got ''" })
})

t.test('a NaN limit reads as NaN, not null', async (t) => {
  await t.rejects(createServer({ ...base, rest: { ...rest, rateLimiting: { limitingHeader: 'x-api-key', limit: Number('abc') } } }), {
    code: 'FA_ERR_CONFIG',
    message: 'createServer: rest.rateLimiting.limit must be a positive integer, got NaN',
  })
})
