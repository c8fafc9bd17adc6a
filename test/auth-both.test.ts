/**
 * `auth.method: 'both'`: one server accepts a browser (the cookie) and an API client (the bearer
 * header). The header is read first, then the cookie; the cookie's cross-site rules apply only when
 * the token came from the cookie. Over a real socket.
 */
import t from 'tap'
import { createAction, createServer, messages, Ok, signToken } from '../lib/index.js'

const whoami = createAction({
  name: 'whoami',
  description: 'Who the token says',
  isProtected: true,
  handler: (_data, context) => Ok({ userId: context.getAuth()?.userId ?? null }),
})
const login = createAction({
  name: 'login',
  description: 'Sets the auth cookie',
  handler: () => {
    const token = signToken({ sub: 'browser-user' }, { expiresIn: '1h', cookie: true })
    return token.ok ? Ok({ token: token.value }) : token
  },
})

const server = await createServer({
  serverName: 'both',
  logServices: false,
  forceNewInstance: true,
  services: [{ name: 'account', description: 'Auth', actions: [whoami, login] }],
  auth: { secret: 'a-long-random-secret-for-the-auth-both-test', method: 'both' },
  rest: { baseUrl: '/api', allowedOrigins: ['https://app.example'], openapi: { enabled: true, reference: false }, discovery: { enabled: true } },
})
t.teardown(() => server.close())
await server.rest.app.listen({ port: 0, host: '127.0.0.1' })
const origin = `http://127.0.0.1:${(server.rest.app.server.address() as { port: number }).port}`
const jwt = (await import('../lib/index.js')).getActions(server.rest.app).jwt!
const denied = (reason: string) => ({ status: false, message: messages.authFailed(reason), data: {} })

async function call(action: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${origin}/api/services`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ intent: 'execute', service: 'account', action, payload: {} }),
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, setCookie: response.headers.getSetCookie() }
}

t.test('an API client with the bearer header', async (t) => {
  const answer = await call('whoami', { authorization: `Bearer ${jwt.sign({ sub: 'api-client' })}` })
  t.equal(answer.status, 200)
  t.same(answer.body, { status: true, message: "Action 'account.whoami' executed", data: { userId: 'api-client' } })
  const fromOtherSite = await call('whoami', { authorization: `Bearer ${jwt.sign({ sub: 'api-client' })}`, origin: 'https://evil.example' })
  t.equal(fromOtherSite.status, 200, 'a header token is not sent by browsers on their own: no cross-site check')
})

t.test('a browser with the cookie that login set', async (t) => {
  const loggedIn = await call('login')
  t.equal(loggedIn.status, 200)
  const cookie = loggedIn.setCookie.find((line) => line.startsWith('auth_token='))
  t.ok(cookie, 'signToken({ cookie: true }) sets the cookie with method both')
  const pair = cookie!.split(';')[0]!
  const answer = await call('whoami', { cookie: pair, origin: 'https://app.example' })
  t.same(answer.body, { status: true, message: "Action 'account.whoami' executed", data: { userId: 'browser-user' } })
})

t.test("the cookie's cross-site rules apply only to a token from the cookie", async (t) => {
  const cookie = `auth_token=${jwt.sign({ sub: 'victim' })}`
  const crossSite = await call('whoami', { cookie, origin: 'https://evil.example' })
  t.equal(crossSite.status, 401)
  t.same(crossSite.body, denied(messages.authReasons.crossSite))
  const fetchMetadata = await call('whoami', { cookie, 'sec-fetch-site': 'cross-site' })
  t.equal(fetchMetadata.status, 401)
  const withHeader = await call('whoami', { cookie, origin: 'https://evil.example', authorization: `Bearer ${jwt.sign({ sub: 'api-client' })}` })
  t.equal(withHeader.status, 200, 'the header is read first: its token is not subject to the cookie rules')
  t.same(withHeader.body.data, { userId: 'api-client' })
})

t.test('the header first: a bad header is refused, not passed over for the cookie', async (t) => {
  const cookie = `auth_token=${jwt.sign({ sub: 'browser-user' })}`
  const answer = await call('whoami', { cookie, authorization: 'Basic dXNlcjpwYXNz' })
  t.equal(answer.status, 401)
  t.same(answer.body, denied(messages.authReasons.badScheme))
  const none = await call('whoami')
  t.same(none.body, denied(messages.authReasons.missingToken))
})

t.test('the OpenAPI document offers either scheme', async (t) => {
  const document = (await (await fetch(`${origin}/api/openapi.json`)).json()) as {
    components: { securitySchemes: Record<string, unknown> }
    paths: Record<string, { post: { security?: unknown } }>
  }
  t.same(Object.keys(document.components.securitySchemes).sort(), ['bearerAuth', 'cookieAuth'])
  t.same(document.paths['/api/services/account/whoami']!.post.security, [{ bearerAuth: [] }, { cookieAuth: [] }])
})

t.test('an unknown method is refused, naming the three', async (t) => {
  await t.rejects(
    createServer({ serverName: 'x', forceNewInstance: true, logServices: false, services: [{ name: 'a', description: 'a', actions: [whoami] }], auth: { secret: 'x'.repeat(40), method: 'query' as 'both' }, rest: { baseUrl: '/api', allowedOrigins: [] } }),
    { message: "createServer: auth.method must be 'header', 'cookie' or 'both', got 'query'" },
  )
})
