import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import type { CorsConfig } from '../../lib/index.js'
import { buildServer } from '../helpers/server.js'

// Finding 6: with an empty allowedOrigins (or ['*']) the answer carried
// `Access-Control-Allow-Origin: *` with `Access-Control-Allow-Credentials: true`. Decision: `*`
// never carries credentials (a reflected origin with credentials would be a CSRF amplifier).

const ORIGIN = 'https://evil.example'

async function build(t: Test, allowedOrigins: string[], cors?: CorsConfig) {
  const server = await buildServer({ rest: { allowedOrigins, cors } })
  t.teardown(() => server.close())
  return server.app
}

const simple = (app: FastifyInstance) =>
  app.inject({ method: 'POST', url: '/api/services', headers: { origin: ORIGIN }, payload: { intent: 'execute', service: 'tasks', action: 'list', payload: {} } })
const preflight = (app: FastifyInstance) =>
  app.inject({ method: 'OPTIONS', url: '/api/services', headers: { origin: ORIGIN, 'access-control-request-method': 'POST' } })

for (const [label, allowedOrigins, cors] of [
  ['empty allowedOrigins', [], undefined],
  ["allowedOrigins ['*']", ['*'], undefined],
  ["cors.defaults.origin '*' with credentials: true", ['https://a.example'], { defaults: { origin: '*', credentials: true } }],
  ["an origin function answering '*'", [], { defaults: { origin: () => '*' } }],
] as const) {
  t.test(`${label}: * without credentials, on simple and preflight answers`, async (t) => {
    const app = await build(t, [...allowedOrigins], cors as CorsConfig | undefined)
    for (const response of [await simple(app), await preflight(app)]) {
      t.equal(response.headers['access-control-allow-origin'], '*')
      t.equal(response.headers['access-control-allow-credentials'], undefined)
    }
    t.equal((await simple(app)).statusCode, 200)
    t.equal((await preflight(app)).statusCode, 204)
  })
}

t.test('a listed origin keeps its credentials (echoed, never *)', async (t) => {
  const app = await build(t, [ORIGIN])
  const response = await simple(app)
  t.equal(response.headers['access-control-allow-origin'], ORIGIN)
  t.equal(response.headers['access-control-allow-credentials'], 'true')
})

t.test('an unlisted origin is not reflected', async (t) => {
  const app = await build(t, ['https://a.example'])
  const response = await simple(app)
  t.equal(response.headers['access-control-allow-origin'], undefined)
})
