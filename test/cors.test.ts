import t, { type Test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { createAction, messages, type ActionsApp, type CorsConfig, type CorsOptions, type CorsResolver } from '../lib/index.js'
import { echoService } from './helpers/fixtures.js'
import { paymentService } from './helpers/idempotency.js'
import { buildServer, execute } from './helpers/server.js'

const ALLOWED = 'https://app.example'
const OTHER = 'https://other.example'
const executedList = { status: true, message: messages.executed('tasks', 'list'), data: { result: [1, 2, 3] } }
const notFound = { status: false, message: messages.routeNotFound('/api'), data: {} }

async function build(t: Test, allowedOrigins: string[], cors?: CorsConfig, extra: Record<string, unknown> = {}): Promise<ActionsApp> {
  const server = await buildServer({ rest: { allowedOrigins, cors, ...extra } })
  t.teardown(() => server.close())
  return server.app
}

/** A browser preflight for `url`. */
function preflight(app: FastifyInstance, url: string, origin: string | undefined, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'OPTIONS',
    url,
    headers: { ...(origin === undefined ? {} : { origin }), 'access-control-request-method': 'POST', ...headers },
  })
}

/** A simple (non-preflighted) request: the execute of `tasks.list`. */
async function simple(t: Test, app: FastifyInstance, origin: string | undefined) {
  const answer = await execute(app, 'tasks', 'list', {}, { headers: origin === undefined ? {} : { origin } })
  t.equal(answer.statusCode, 200)
  t.strictSame(answer.body, executedList, 'the envelope is untouched by CORS')
  return answer.headers
}

/** Asserts an empty 204 preflight answer. */
function isPreflight(t: Test, response: LightMyRequestResponse) {
  t.equal(response.statusCode, 204)
  t.equal(response.body, '')
}

function allowOrigin(headers: Record<string, unknown>) {
  return headers['access-control-allow-origin']
}

t.test('defaults with allowedOrigins', async (t) => {
  const app = await build(t, [ALLOWED, 'https://second.example'])

  t.test('a simple request from a listed origin echoes it with the default headers', async (t) => {
    const headers = await simple(t, app, ALLOWED)
    t.equal(allowOrigin(headers), ALLOWED)
    t.equal(headers['access-control-allow-credentials'], 'true')
    t.equal(headers['access-control-expose-headers'], 'Content-Length')
    t.match(headers.vary, /Origin/)
    t.equal(headers['access-control-allow-methods'], undefined, 'methods are a preflight header')
    t.equal(allowOrigin(await simple(t, app, 'https://second.example')), 'https://second.example')
  })

  t.test('a preflight from a listed origin answers 204 with every default', async (t) => {
    const response = await preflight(app, '/api/services', ALLOWED, { 'access-control-request-headers': 'content-type, x-custom' })
    isPreflight(t, response)
    t.equal(allowOrigin(response.headers), ALLOWED)
    t.equal(response.headers['access-control-allow-credentials'], 'true')
    t.equal(response.headers['access-control-allow-methods'], 'POST, GET, OPTIONS')
    t.equal(response.headers['access-control-allow-headers'], 'Content-Type, Authorization')
    t.equal(response.headers['access-control-expose-headers'], 'Content-Length')
    t.equal(response.headers['access-control-max-age'], '600')
  })

  t.test('an unlisted origin gets no allow-origin header, on simple and preflight requests', async (t) => {
    t.equal(allowOrigin(await simple(t, app, OTHER)), undefined)
    const response = await preflight(app, '/api/services', OTHER)
    isPreflight(t, response)
    t.equal(allowOrigin(response.headers), undefined)
  })

  t.test('a request without Origin gets no allow-origin header', async (t) => {
    t.equal(allowOrigin(await simple(t, app, undefined)), undefined)
  })

  t.test('an OPTIONS without Access-Control-Request-Method is still an empty 204, never a plain-text 400', async (t) => {
    const response = await app.inject({ method: 'OPTIONS', url: '/api/services', headers: { origin: ALLOWED } })
    isPreflight(t, response)
    const bare = await app.inject({ method: 'OPTIONS', url: '/api/services' })
    isPreflight(t, bare)
  })

  t.test('error envelopes carry the CORS headers too', async (t) => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/services',
      headers: { origin: ALLOWED, 'content-type': 'application/json' },
      payload: '{not json',
    })
    t.equal(response.statusCode, 400)
    t.strictSame(response.json(), { status: false, message: messages.invalidBody, data: {} })
    t.equal(allowOrigin(response.headers), ALLOWED)
  })

  t.test('the 404 envelope carries the CORS headers', async (t) => {
    const response = await app.inject({ method: 'GET', url: '/nowhere', headers: { origin: ALLOWED } })
    t.equal(response.statusCode, 404)
    t.strictSame(response.json(), notFound)
    t.equal(allowOrigin(response.headers), ALLOWED)
  })
})

t.test('empty allowedOrigins allows every origin with *', async (t) => {
  const app = await build(t, [])
  const headers = await simple(t, app, OTHER)
  t.equal(allowOrigin(headers), '*')
  t.equal(headers['access-control-allow-credentials'], undefined, 'no credentials with * (test/hostile/cors.test.ts)')
  const response = await preflight(app, '/api/services', 'http://anything.example')
  isPreflight(t, response)
  t.equal(allowOrigin(response.headers), '*')
  t.equal(response.headers['access-control-allow-methods'], 'POST, GET, OPTIONS')
  t.equal(allowOrigin(await simple(t, app, undefined)), '*')
})

t.test('a * in allowedOrigins allows every origin', async (t) => {
  const app = await build(t, [ALLOWED, '*'])
  t.equal(allowOrigin(await simple(t, app, OTHER)), '*')
})

t.test('enabled', async (t) => {
  t.test('false: no CORS headers at all, and OPTIONS falls to the 404 envelope', async (t) => {
    const app = await build(t, [ALLOWED], { enabled: false })
    const headers = await simple(t, app, ALLOWED)
    for (const name of Object.keys(headers)) t.notOk(name.startsWith('access-control-'), `no ${name}`)
    t.notMatch(String(headers.vary ?? ''), /Origin/)
    const response = await preflight(app, '/api/services', ALLOWED)
    t.equal(response.statusCode, 404)
    t.strictSame(response.json(), notFound)
    t.equal(allowOrigin(response.headers), undefined)
  })
  for (const enabled of [true, 'default'] as const) {
    t.test(`${enabled}: active`, async (t) => {
      const app = await build(t, [ALLOWED], { enabled })
      t.equal(allowOrigin(await simple(t, app, ALLOWED)), ALLOWED)
    })
  }
})

t.test('cors.defaults override each default', async (t) => {
  t.test('origin string: echoed only to that origin; allowedOrigins is ignored', async (t) => {
    const app = await build(t, [ALLOWED], { defaults: { origin: OTHER } })
    t.equal(allowOrigin(await simple(t, app, OTHER)), OTHER)
    t.equal(allowOrigin(await simple(t, app, ALLOWED)), undefined)
  })
  t.test('origin *', async (t) => {
    const app = await build(t, [ALLOWED], { defaults: { origin: '*' } })
    t.equal(allowOrigin(await simple(t, app, OTHER)), '*')
  })
  t.test('origin list', async (t) => {
    const app = await build(t, [], { defaults: { origin: [OTHER, 'https://third.example'] } })
    t.equal(allowOrigin(await simple(t, app, 'https://third.example')), 'https://third.example')
    t.equal(allowOrigin(await simple(t, app, ALLOWED)), undefined, 'the list replaces the * of an empty allowedOrigins')
  })
  t.test('origin function: its string is the header; null, undefined or an empty string send none', async (t) => {
    const seen: Array<[string, string]> = []
    const origin = (requestOrigin: string, c: { req: { url: string } }) => {
      seen.push([requestOrigin, c.req.url])
      if (requestOrigin === ALLOWED) return 'https://fixed.example'
      if (requestOrigin === OTHER) return null
      if (requestOrigin === 'https://empty.example') return ''
      return undefined
    }
    const app = await build(t, [], { defaults: { origin } })
    t.equal(allowOrigin(await simple(t, app, ALLOWED)), 'https://fixed.example')
    t.equal(allowOrigin(await simple(t, app, OTHER)), undefined)
    t.equal(allowOrigin(await simple(t, app, 'https://empty.example')), undefined)
    t.equal(allowOrigin(await simple(t, app, 'https://unknown.example')), undefined)
    t.equal(allowOrigin(await simple(t, app, undefined)), undefined)
    t.strictSame(seen[0], [ALLOWED, '/api/services'], 'it receives the origin and c.req')
    t.strictSame(seen.at(-1), ['', '/api/services'], 'a request without Origin passes an empty string')
    const response = await preflight(app, '/api/services', OTHER)
    isPreflight(t, response)
    t.equal(allowOrigin(response.headers), undefined, 'a refused preflight is still answered, without allow-origin')
  })
  t.test('allowMethods list', async (t) => {
    const app = await build(t, [ALLOWED], { defaults: { allowMethods: ['GET', 'PUT'] } })
    t.equal((await preflight(app, '/api/services', ALLOWED)).headers['access-control-allow-methods'], 'GET, PUT')
  })
  t.test('allowMethods function receives the origin and c', async (t) => {
    const allowMethods = (origin: string, c: { req: { method: string } }) => (origin === ALLOWED ? ['DELETE', c.req.method] : ['GET'])
    const app = await build(t, [ALLOWED, OTHER], { defaults: { allowMethods } })
    t.equal((await preflight(app, '/api/services', ALLOWED)).headers['access-control-allow-methods'], 'DELETE, OPTIONS')
    t.equal((await preflight(app, '/api/services', OTHER)).headers['access-control-allow-methods'], 'GET')
  })
  t.test('allowHeaders list; an empty list reflects the requested headers', async (t) => {
    const app = await build(t, [ALLOWED], { defaults: { allowHeaders: ['X-Api-Key'] } })
    t.equal((await preflight(app, '/api/services', ALLOWED)).headers['access-control-allow-headers'], 'X-Api-Key')
    const reflecting = await build(t, [ALLOWED], { defaults: { allowHeaders: [] } })
    const response = await preflight(reflecting, '/api/services', ALLOWED, { 'access-control-request-headers': 'x-one, x-two' })
    t.equal(response.headers['access-control-allow-headers'], 'x-one, x-two')
  })
  t.test('exposeHeaders list; an empty list sends none', async (t) => {
    const app = await build(t, [ALLOWED], { defaults: { exposeHeaders: ['X-Request-Id', 'Content-Length'] } })
    t.equal((await simple(t, app, ALLOWED))['access-control-expose-headers'], 'X-Request-Id, Content-Length')
    const none = await build(t, [ALLOWED], { defaults: { exposeHeaders: [] } })
    t.equal((await simple(t, none, ALLOWED))['access-control-expose-headers'], undefined)
  })
  t.test('maxAge', async (t) => {
    const app = await build(t, [ALLOWED], { defaults: { maxAge: 7200 } })
    t.equal((await preflight(app, '/api/services', ALLOWED)).headers['access-control-max-age'], '7200')
  })
  t.test('credentials false sends no allow-credentials', async (t) => {
    const app = await build(t, [ALLOWED], { defaults: { credentials: false } })
    const headers = await simple(t, app, ALLOWED)
    t.equal(allowOrigin(headers), ALLOWED)
    t.equal(headers['access-control-allow-credentials'], undefined)
    t.equal((await preflight(app, '/api/services', ALLOWED)).headers['access-control-allow-credentials'], undefined)
  })
  t.test('an undefined field keeps the default', async (t) => {
    const app = await build(t, [ALLOWED], { defaults: { maxAge: undefined, origin: undefined } })
    const response = await preflight(app, '/api/services', ALLOWED)
    t.equal(response.headers['access-control-max-age'], '600')
    t.equal(allowOrigin(response.headers), ALLOWED)
  })
})

t.test('addCors route rules', async (t) => {
  t.test('a matching options rule wins over the global rule and is merged over the defaults', async (t) => {
    const app = await build(t, [ALLOWED], { addCors: [{ path: '/api/*', options: { origin: [OTHER], maxAge: 60 } }] }, { enableStatus: true })
    const response = await preflight(app, '/api/services', OTHER)
    isPreflight(t, response)
    t.equal(allowOrigin(response.headers), OTHER)
    t.equal(response.headers['access-control-max-age'], '60')
    t.equal(response.headers['access-control-allow-headers'], 'Content-Type, Authorization', 'unset fields keep the defaults')
    t.equal(allowOrigin(await simple(t, app, ALLOWED)), undefined, 'the global origin no longer applies under the rule')
    const status = await app.inject({ method: 'GET', url: '/status', headers: { origin: ALLOWED } })
    t.equal(status.statusCode, 200)
    t.strictSame(status.json(), { status: true, message: messages.running('test-server'), data: {} })
    t.equal(allowOrigin(status.headers), ALLOWED, 'paths outside the rule use the defaults')
  })

  t.test('paths match like middleware: a prefix covers itself and below, not a longer name', async (t) => {
    const app = await build(t, [ALLOWED], { addCors: [{ path: '/api', options: { origin: '*' } }] })
    t.equal(allowOrigin(await simple(t, app, OTHER)), '*')
    const longer = await app.inject({ method: 'GET', url: '/apix', headers: { origin: OTHER } })
    t.equal(longer.statusCode, 404)
    t.equal(allowOrigin(longer.headers), undefined)
    const queried = await app.inject({ method: 'GET', url: '/api?x=/y', headers: { origin: OTHER } })
    t.equal(allowOrigin(queried.headers), '*', 'the query string is not part of the path')
  })

  t.test('the first matching rule decides', async (t) => {
    const app = await build(t, [ALLOWED], {
      addCors: [
        { path: '/api/services', options: { origin: '*' } },
        { path: '/api/*', options: { origin: [OTHER] } },
      ],
    })
    t.equal(allowOrigin(await simple(t, app, 'https://any.example')), '*')
  })

  t.test('a rule with both options and resolver uses the resolver', async (t) => {
    const app = await build(t, [ALLOWED], { addCors: [{ path: '*', options: { origin: '*' }, resolver: () => ({ origin: [OTHER] }) }] })
    t.equal(allowOrigin(await simple(t, app, OTHER)), OTHER)
    t.equal(allowOrigin(await simple(t, app, 'https://any.example')), undefined)
  })

  t.test('a rule with neither uses the defaults', async (t) => {
    const app = await build(t, [ALLOWED], { addCors: [{ path: '/api/*' }] })
    t.equal(allowOrigin(await simple(t, app, ALLOWED)), ALLOWED)
  })

  t.test('resolver results', async (t) => {
    const resolverFor = (result: ReturnType<CorsResolver>): CorsRouteConfig => ({ addCors: [{ path: '/api/*', resolver: () => result }] })
    type CorsRouteConfig = CorsConfig

    t.test('true uses the defaults', async (t) => {
      const app = await build(t, [ALLOWED], resolverFor(true))
      t.equal(allowOrigin(await simple(t, app, ALLOWED)), ALLOWED)
      t.equal(allowOrigin(await simple(t, app, OTHER)), undefined)
    })
    t.test('undefined uses the defaults', async (t) => {
      const app = await build(t, [ALLOWED], resolverFor(undefined))
      const response = await preflight(app, '/api/services', ALLOWED)
      t.equal(allowOrigin(response.headers), ALLOWED)
      t.equal(response.headers['access-control-max-age'], '600')
    })
    t.test('false denies: no allow-origin, even for a listed origin, but the preflight is answered', async (t) => {
      const app = await build(t, [ALLOWED], resolverFor(false))
      t.equal(allowOrigin(await simple(t, app, ALLOWED)), undefined)
      const response = await preflight(app, '/api/services', ALLOWED)
      isPreflight(t, response)
      t.equal(allowOrigin(response.headers), undefined)
    })
    t.test('an options object is merged over the defaults', async (t) => {
      const options: CorsOptions = { origin: '*', allowHeaders: ['X-Token'], credentials: false }
      const app = await build(t, [ALLOWED], resolverFor(options))
      const response = await preflight(app, '/api/services', OTHER)
      t.equal(allowOrigin(response.headers), '*')
      t.equal(response.headers['access-control-allow-headers'], 'X-Token')
      t.equal(response.headers['access-control-allow-credentials'], undefined)
      t.equal(response.headers['access-control-allow-methods'], 'POST, GET, OPTIONS', 'unset fields keep the defaults')
      t.equal(response.headers['access-control-max-age'], '600')
      t.equal(allowOrigin((await preflight(app, '/api/services', OTHER)).headers), '*', 'the same object again')
    })
    t.test('the resolver receives the origin and c.req', async (t) => {
      const seen: Array<[string, string]> = []
      const app = await build(t, [ALLOWED], {
        addCors: [{ path: '*', resolver: (origin, c) => (seen.push([origin, c.req.method]), c.req.headers['x-trusted'] === 'yes') }],
      })
      t.equal(allowOrigin(await simple(t, app, ALLOWED)), undefined)
      const trusted = await execute(app, 'tasks', 'list', {}, { headers: { origin: ALLOWED, 'x-trusted': 'yes' } })
      t.equal(allowOrigin(trusted.headers), ALLOWED)
      t.strictSame(seen[0], [ALLOWED, 'POST'])
    })
    t.test('a thrown error is logged to the console and denies', async (t) => {
      const logged = t.capture(console, 'error')
      const app = await build(t, [ALLOWED], {
        addCors: [
          {
            path: '/api/*',
            resolver: () => {
              throw new Error('resolver broke')
            },
          },
        ],
      })
      t.equal(allowOrigin(await simple(t, app, ALLOWED)), undefined)
      const response = await preflight(app, '/api/services', ALLOWED)
      isPreflight(t, response)
      t.equal(allowOrigin(response.headers), undefined)
      t.strictSame(logged.args(), [
        [messages.corsRuleFailed('/api/*', 'resolver broke')],
        [messages.corsRuleFailed('/api/*', 'resolver broke')],
      ])
    })
    t.test('an invalid result (a string, or options with a bad field) is logged and denies', async (t) => {
      const logged = t.capture(console, 'error')
      const app = await build(t, [ALLOWED], {
        addCors: [
          { path: '/api/*', resolver: () => 'yes' as unknown as boolean },
          { path: '*', resolver: () => ({ allowHeaders: 'X-Token' as unknown as string[] }) },
        ],
      })
      t.equal(allowOrigin(await simple(t, app, ALLOWED)), undefined)
      const other = await app.inject({ method: 'GET', url: '/elsewhere', headers: { origin: ALLOWED } })
      t.equal(other.statusCode, 404)
      t.equal(allowOrigin(other.headers), undefined)
      t.strictSame(logged.args(), [
        [messages.corsRuleFailed('/api/*', messages.corsInvalidResolverResult('string'))],
        [messages.corsRuleFailed('*', messages.corsInvalidOption('allowHeaders'))],
      ])
    })
  })

  t.test('a throwing origin function in the defaults is logged and denies', async (t) => {
    const logged = t.capture(console, 'error')
    const app = await build(t, [ALLOWED], {
      defaults: {
        origin: () => {
          throw new Error('origin broke')
        },
      },
    })
    t.equal(allowOrigin(await simple(t, app, ALLOWED)), undefined)
    t.strictSame(logged.args(), [[messages.corsRuleFailed('*', 'origin broke')]])
  })
})

t.test('custom routes added after createServer get CORS headers', async (t) => {
  const app = await build(t, [ALLOWED])
  app.get('/custom', async () => ({ status: true, message: 'custom', data: {} }))
  const response = await app.inject({ method: 'GET', url: '/custom', headers: { origin: ALLOWED } })
  t.equal(response.statusCode, 200)
  t.strictSame(response.json(), { status: true, message: 'custom', data: {} })
  t.equal(allowOrigin(response.headers), ALLOWED)
  t.equal(response.headers['access-control-allow-credentials'], 'true')
  const refused = await app.inject({ method: 'GET', url: '/custom', headers: { origin: OTHER } })
  t.equal(allowOrigin(refused.headers), undefined)
  const pre = await preflight(app, '/custom', ALLOWED)
  isPreflight(t, pre)
  t.equal(allowOrigin(pre.headers), ALLOWED)
})

t.test('a custom route can opt out with config.cors false', async (t) => {
  const app = await build(t, [ALLOWED])
  app.get('/private', { config: { cors: false } }, async () => ({ status: true, message: 'private', data: {} }))
  const response = await app.inject({ method: 'GET', url: '/private', headers: { origin: ALLOWED } })
  t.equal(response.statusCode, 200)
  t.strictSame(response.json(), { status: true, message: 'private', data: {} })
  t.equal(allowOrigin(response.headers), undefined)
  t.equal(response.headers['access-control-allow-credentials'], undefined)
})

t.test('the fetch adapter sees the CORS headers', async (t) => {
  const app = await build(t, [ALLOWED])
  const response = await app.fetch('/api/services', {
    method: 'POST',
    headers: { origin: ALLOWED, 'content-type': 'application/json' },
    body: JSON.stringify({ intent: 'execute', service: 'tasks', action: 'list', payload: {} }),
  })
  t.equal(response.status, 200)
  t.strictSame(await response.json(), executedList)
  t.equal(response.headers.get('access-control-allow-origin'), ALLOWED)
})

t.test('invalid configuration fails at boot with a descriptive error', async (t) => {
  await t.rejects(buildServer({ rest: { allowedOrigins: ALLOWED as unknown as string[] } }), { message: messages.corsAllowedOrigins, code: 'FA_ERR_CONFIG' })
  await t.rejects(buildServer({ rest: { allowedOrigins: [], cors: { addCors: [{ options: {} } as never] } } }), { message: messages.corsInvalidRule(0), code: 'FA_ERR_CONFIG' })
  await t.rejects(
    buildServer({ rest: { allowedOrigins: [], cors: { addCors: [{ path: '*', resolver: 'yes' as never }] } } }),
    { message: messages.corsInvalidRule(0), code: 'FA_ERR_CONFIG' },
  )
  await t.rejects(
    buildServer({ rest: { allowedOrigins: [], cors: { defaults: { allowHeaders: 'X' as unknown as string[] } } } }),
    { message: messages.corsInvalidOption('allowHeaders'), code: 'FA_ERR_CONFIG' },
  )
  await t.rejects(
    buildServer({ rest: { allowedOrigins: [], cors: { addCors: [{ path: '/x', options: { maxAge: 'long' as unknown as number } }] } } }),
    { message: messages.corsInvalidOption('maxAge'), code: 'FA_ERR_CONFIG' },
  )
  const disabled = await buildServer({ rest: { allowedOrigins: ALLOWED as unknown as string[], cors: { enabled: false } } })
  t.teardown(() => disabled.close())
  t.pass('with CORS off, allowedOrigins is not read')
})

t.test('a fixed policy needs no per-request delegator', async (t) => {
  const { compileCors } = await import('../plugins/cors.js')
  const plain = compileCors({ allowedOrigins: ['https://a.example'] })
  t.match(plain.fixed, { origin: ['https://a.example'], credentials: true, methods: 'POST, GET, OPTIONS', maxAge: 600 })
  t.equal(compileCors({ allowedOrigins: [], cors: { addCors: [{ path: '/x', options: {} }] } }).fixed, undefined, 'route rules need the delegator')
  t.equal(compileCors({ allowedOrigins: [], cors: { defaults: { origin: () => 'https://b.example' } } }).fixed, undefined, 'an origin function needs it')
})

t.test('the headers of the features that are on: Last-Event-ID for streams, Idempotency-Key and Idempotent-Replayed for keys', async (t) => {
  const stream = createAction({
    name: 'feed',
    description: 'Streams two events',
    handler: async function* () {
      yield { n: 1 }
      yield { n: 2 }
    },
  })
  const runs: Record<string, number> = {}
  const both = await buildServer({ services: [echoService, paymentService({ runs }), { name: 'feeds', description: 'Feeds', actions: [stream] }], rest: { allowedOrigins: [ALLOWED] } })
  t.teardown(() => both.close())
  const streamsOnly = await buildServer({ services: [echoService, { name: 'feeds', description: 'Feeds', actions: [stream] }], rest: { allowedOrigins: [ALLOWED] } })
  t.teardown(() => streamsOnly.close())
  const withMcp = await buildServer({ services: [paymentService({ runs: {} }), { name: 'feeds', description: 'Feeds', actions: [stream] }], rest: { allowedOrigins: [ALLOWED], mcp: { enabled: true } } })
  t.teardown(() => withMcp.close())

  let response = await preflight(both.app, '/api/services', ALLOWED, { 'access-control-request-headers': 'content-type, last-event-id, idempotency-key' })
  isPreflight(t, response)
  t.equal(response.headers['access-control-allow-headers'], 'Content-Type, Authorization, Last-Event-ID, Idempotency-Key')
  t.equal(response.headers['access-control-expose-headers'], 'Content-Length, Idempotent-Replayed')
  response = await preflight(streamsOnly.app, '/api/services', ALLOWED)
  t.equal(response.headers['access-control-allow-headers'], 'Content-Type, Authorization, Last-Event-ID', 'no idempotent action: no Idempotency-Key')
  t.equal(response.headers['access-control-expose-headers'], 'Content-Length')
  response = await preflight(withMcp.app, '/api/services', ALLOWED)
  t.equal(response.headers['access-control-allow-headers'], 'Content-Type, Authorization, Mcp-Protocol-Version, Last-Event-ID, Idempotency-Key')

  // A replayed answer says so, and a browser may read that it does.
  const call = () => execute(both.app, 'pay', 'charge', { amount: 5 }, { headers: { origin: ALLOWED, 'idempotency-key': 'k-cors' } })
  const first = await call()
  const again = await call()
  t.equal(first.statusCode, 200)
  t.strictSame(again.body, first.body)
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal(again.headers['access-control-expose-headers'], 'Content-Length, Idempotent-Replayed')
  t.equal(runs.charge, 1)

  // `cors.defaults.allowHeaders` still replaces the whole list.
  const own = await buildServer({ services: [{ name: 'feeds', description: 'Feeds', actions: [stream] }], rest: { allowedOrigins: [ALLOWED], cors: { defaults: { allowHeaders: ['Content-Type'] } } } })
  t.teardown(() => own.close())
  t.equal((await preflight(own.app, '/api/services', ALLOWED)).headers['access-control-allow-headers'], 'Content-Type')
})
