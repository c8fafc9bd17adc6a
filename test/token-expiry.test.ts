/**
 * Token lifetimes: `expiresIn` is what @fastify/jwt takes (seconds, or a duration such as '8h'); a
 * number over a year (milliseconds given by mistake: a week in milliseconds is 19 years) is refused with
 * a message that says the unit, by `signToken` (an Err) and by the handle's `jwt.sign` (a throw).
 */
import t from 'tap'
import Type from 'typebox'
import { createAction, createServer, getActions, Ok, signToken } from '../lib/index.js'

const login = createAction({
  name: 'login',
  description: 'Issues a token with the lifetime asked for',
  validation: Type.Object({ expiresIn: Type.Union([Type.Number(), Type.String()]) }),
  handler: (data) => {
    const token = signToken({ sub: 'u-1' }, { expiresIn: data.expiresIn })
    return token.ok ? Ok({ token: token.value }) : token
  },
})

const server = await createServer({
  serverName: 'tokens',
  logServices: false,
  forceNewInstance: true,
  services: [{ name: 'account', description: 'Auth', actions: [login] }],
  auth: { secret: 'a-long-random-secret-for-the-token-expiry-test' },
  rest: { baseUrl: '/api', allowedOrigins: [] },
})
t.teardown(() => server.close())
const { jwt } = getActions(server.rest.app)

async function issue(expiresIn: number | string) {
  const response = await server.rest.app.inject({
    method: 'POST',
    url: '/api/services',
    payload: { intent: 'execute', service: 'account', action: 'login', payload: { expiresIn } },
  })
  return { statusCode: response.statusCode, body: response.json() as { status: boolean; message: string; data: { token?: string } } }
}

/** Seconds between `iat` and `exp` of a token. */
function lifetime(token: string): number {
  const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { iat: number; exp: number }
  return claims.exp - claims.iat
}

t.test('a number is seconds and a text is a duration, as @fastify/jwt takes them', async (t) => {
  for (const [expiresIn, seconds] of [[60, 60], [8 * 3600, 28_800], ['8h', 28_800], ['15m', 900], ['7d', 604_800], ['365d', 31_536_000]] as const) {
    const { statusCode, body } = await issue(expiresIn)
    t.equal(statusCode, 200, `expiresIn ${JSON.stringify(expiresIn)} is accepted`)
    t.equal(lifetime(body.data.token!), seconds, `expiresIn ${JSON.stringify(expiresIn)} lives ${seconds} s`)
  }
})

t.test('over a year is refused with a message that says the unit', async (t) => {
  // A week in milliseconds, by mistake: 604,800,000 seconds are 19 years.
  const { statusCode, body } = await issue(7 * 24 * 3600 * 1000)
  t.equal(statusCode, 400)
  t.same(body, {
    status: false,
    message: "signToken: expiresIn 604800000 is over a year: it is in seconds (as @fastify/jwt takes it), not milliseconds; for 8 hours pass 8 * 3600 or '8h'",
    data: {},
  })
  const text = await issue('2y')
  t.equal(text.statusCode, 400)
  t.equal(text.body.message, `signToken: expiresIn "2y" is over a year: it is in seconds (as @fastify/jwt takes it), not milliseconds; for 8 hours pass 8 * 3600 or '8h'`)
})

t.test('a lifetime that is not one is refused, never signed', async (t) => {
  for (const expiresIn of [0, -5, 'soon', '']) {
    const { statusCode, body } = await issue(expiresIn)
    t.equal(statusCode, 400, `expiresIn ${JSON.stringify(expiresIn)}`)
    t.match(body.message, /^signToken: expiresIn must be a positive number of seconds or a duration such as '8h' or '7d', got /)
  }
})

t.test("the handle's jwt.sign checks the same way", async (t) => {
  t.equal(lifetime(jwt!.sign({ sub: 'u-2' }, { expiresIn: '1h' })), 3600)
  t.throws(() => jwt!.sign({ sub: 'u-2' }, { expiresIn: 7 * 24 * 3600 * 1000 }), {
    name: 'TypeError',
    message: "jwt.sign: expiresIn 604800000 is over a year: it is in seconds (as @fastify/jwt takes it), not milliseconds; for 8 hours pass 8 * 3600 or '8h'",
  })
})
