/**
 * Auth findings of issue 30, over real sockets: `auth.verify` (aud/iss/sub, required claims, maxAge)
 * and a default token lifetime (9); cookies during an MCP tool call (10); `Secure` outside loopback
 * development (13); the cookie CSRF check with `Sec-Fetch-Site: same-site` and the scheme (15).
 */
import type { AddressInfo } from 'node:net'
import { createSigner } from 'fast-jwt'
import t, { type Test } from 'tap'
import { clearTokenCookie, createAction, messages, Ok, signToken, type AuthConfig, type Service } from '../lib/index.js'
import { rawRequest } from './helpers/raw-http.js'
import { buildServer, type TestConfig } from './helpers/server.js'

const SECRET = 'auth-hardening-secret-that-is-long-enough'
const now = () => Math.floor(Date.now() / 1000)
const sign = (claims: Record<string, unknown>) => createSigner({ key: SECRET })(claims)

const whoami = createAction({ name: 'whoami', description: 'The caller', isProtected: true, handler: (_d, context) => Ok({ userId: context.getAuth()?.userId ?? null }) })
const login = createAction({
  name: 'login',
  description: 'Issues a token, as a cookie too',
  handler: () => {
    const token = signToken({ sub: 'u-1' }, { cookie: true })
    return token.ok ? Ok({ token: token.value }) : token
  },
})
const plainLogin = createAction({
  name: 'plainLogin',
  description: 'Issues a token without a cookie',
  handler: () => {
    const token = signToken({ sub: 'u-1' })
    return token.ok ? Ok({ token: token.value }) : token
  },
})
const logout = createAction({ name: 'logout', description: 'Clears the cookie', handler: () => clearTokenCookie() })
const account: Service = { name: 'account', description: 'Auth', actions: [whoami, login, plainLogin, logout] }

async function start(t: Test, auth: Partial<AuthConfig>, rest: TestConfig['rest'] = {}) {
  const server = await buildServer({ services: [account], auth: { secret: SECRET, ...auth }, rest: { mcp: { enabled: true }, ...(rest || {}) } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (server.app.server.address() as AddressInfo).port
  const call = (action: string, headers: Record<string, string> = {}) =>
    rawRequest(port, {
      method: 'POST',
      path: '/api/services',
      headers: { host: `localhost:${port}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ intent: 'execute', service: 'account', action, payload: {} }),
    })
  return { server, port, call }
}

const refused = (reason: string) => ({ status: false, message: messages.authFailed(reason), data: {} })
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>

t.test('auth.verify: a token minted for another audience or issuer, or without them, is refused', async (t) => {
  const { call } = await start(t, { verify: { allowedAud: 'api', allowedIss: 'https://login.example' } })
  const bearer = (claims: Record<string, unknown>) => call('whoami', { authorization: `Bearer ${sign({ sub: 'u-1', exp: now() + 600, ...claims })}` })
  const good = await bearer({ aud: 'api', iss: 'https://login.example' })
  t.same({ status: good.status, body: good.json.data }, { status: 200, body: { userId: 'u-1' } })
  for (const [label, claims, reason] of [
    ['aud: password-reset', { aud: 'password-reset', iss: 'https://login.example' }, messages.authReasons.claimRefused],
    ['another issuer', { aud: 'api', iss: 'https://evil.example' }, messages.authReasons.claimRefused],
    ['no aud', { iss: 'https://login.example' }, messages.authReasons.claimMissing],
    ['no iss', { aud: 'api' }, messages.authReasons.claimMissing],
    ['aud of the wrong type', { aud: 42, iss: 'https://login.example' }, messages.authReasons.claimRefused],
  ] as const) {
    const answer = await bearer(claims)
    t.same({ status: answer.status, body: answer.json }, { status: 401, body: refused(reason) }, label)
  }
})

t.test('auth.verify: requiredClaims and maxAge', async (t) => {
  const { call } = await start(t, { verify: { requiredClaims: ['exp'], maxAge: '1h' } })
  const bearer = (claims: Record<string, unknown>) => call('whoami', { authorization: `Bearer ${sign({ sub: 'u-1', ...claims })}` })
  const immortal = await bearer({ iat: now() })
  t.same({ status: immortal.status, body: immortal.json }, { status: 401, body: refused(messages.authReasons.claimMissing) }, 'a token without exp')
  const old = await bearer({ iat: now() - 7200, exp: now() + 600 })
  t.same({ status: old.status, body: old.json }, { status: 401, body: refused(messages.authReasons.expired) }, 'issued over maxAge ago')
  const fresh = await bearer({ iat: now(), exp: now() + 600 })
  t.equal(fresh.status, 200)
})

t.test('signToken signs with the verify defaults (aud, iss) and expires in auth.expiresIn, 1h by default', async (t) => {
  const strict = await start(t, { verify: { allowedAud: 'api', allowedIss: 'https://login.example' } })
  const issued = await strict.call('plainLogin')
  const token = issued.json.data.token as string
  const claims = claimsOf(token)
  t.equal(claims.aud, 'api')
  t.equal(claims.iss, 'https://login.example')
  t.equal(Number(claims.exp) - Number(claims.iat), 3600, 'expires in an hour, not never')
  const back = await strict.call('whoami', { authorization: `Bearer ${token}` })
  t.equal(back.status, 200, 'the server accepts its own token')
  const jwt = strict.server.app && (await import('../lib/index.js')).getActions(strict.server.app).jwt!
  t.equal(Number(claimsOf(jwt.sign({ sub: 'x' })).exp) - now() <= 3600, true, "the handle's signer has the same default")

  const short = await start(t, { expiresIn: '5m' })
  const five = claimsOf((await short.call('plainLogin')).json.data.token)
  t.equal(Number(five.exp) - Number(five.iat), 300)
})

t.test('auth config: bad verify, expiresIn or cookie options are refused at boot, naming the field', async (t) => {
  for (const [auth, pattern] of [
    [{ verify: { allowedAud: 42 } }, /auth\.verify\.allowedAud must be a string, a RegExp or a list of them/],
    [{ verify: { requiredClaims: 'exp' } }, /auth\.verify\.requiredClaims must be a list of claim names/],
    [{ verify: { allowedAudience: 'x' } }, /auth\.verify\.allowedAudience is not an option/],
    [{ verify: { maxAge: -1 } }, /auth\.verify\.maxAge must be a positive number/],
    [{ expiresIn: 365 * 24 * 3600 * 1000 }, /auth\.expiresIn \d+ is over a year/],
    [{ cookie: { secure: 'yes' } }, /auth\.cookie\.secure must be a boolean/],
  ] as const) {
    await t.rejects(buildServer({ services: [account], auth: { secret: SECRET, ...(auth as object) } }), { code: 'FA_ERR_CONFIG', message: pattern }, JSON.stringify(auth))
  }
})

t.test('the auth cookie is Secure unless the request is plain HTTP to a loopback host; auth.cookie.secure decides when set', async (t) => {
  const { call, port } = await start(t, { method: 'cookie' }, { allowedHosts: ['api.example.com'] })
  const cookieOf = (answer: { headers: Record<string, unknown> }) => String(answer.headers['set-cookie'])
  t.notMatch(cookieOf(await call('login')), /Secure/, 'http://localhost: local development')
  t.match(cookieOf(await call('login', { host: 'api.example.com' })), /; Secure/, 'plain HTTP to a public name: a TLS proxy in front')
  t.match(cookieOf(await call('login', { host: `127.0.0.1:${port}` })), /HttpOnly/)
  const off = await start(t, { method: 'cookie', cookie: { secure: false } }, { allowedHosts: ['api.example.com'] })
  t.notMatch(cookieOf(await off.call('login', { host: 'api.example.com' })), /Secure/, 'cookie.secure: false')
  const on = await start(t, { method: 'cookie', cookie: { secure: true } })
  t.match(cookieOf(await on.call('login')), /; Secure/, 'cookie.secure: true')
})

t.test('cookie CSRF: same-site fetch metadata without Origin, and another scheme, are refused', async (t) => {
  const { call, port } = await start(t, { method: 'cookie' })
  const token = sign({ sub: 'u-1', exp: now() + 600 })
  const cookie = `auth_token=${token}`
  const cases: Array<[string, Record<string, string>, number]> = [
    ['same-site (a sibling subdomain), no Origin', { 'sec-fetch-site': 'same-site' }, 401],
    ['cross-site, no Origin', { 'sec-fetch-site': 'cross-site' }, 401],
    ['same-origin, no Origin', { 'sec-fetch-site': 'same-origin' }, 200],
    ['none (typed in the address bar)', { 'sec-fetch-site': 'none' }, 200],
    ['own origin', { origin: `http://localhost:${port}` }, 200],
    ['own host over another scheme', { origin: `https://localhost:${port}` }, 401],
    ['own host, another port', { origin: `http://localhost:${port + 1}` }, 401],
  ]
  for (const [label, headers, status] of cases) {
    const answer = await call('whoami', { cookie, ...headers })
    t.equal(answer.status, status, label)
    if (status === 401) t.same(answer.json, refused(messages.authReasons.crossSite), label)
  }
})

t.test('MCP tool calls: signToken({ cookie }) and clearTokenCookie() answer Err instead of dropping the cookie', async (t) => {
  const { port } = await start(t, { method: 'cookie' })
  const tool = async (name: string) =>
    rawRequest(port, {
      method: 'POST',
      path: '/api/mcp',
      headers: { host: `localhost:${port}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } }),
    })
  for (const name of ['account_login', 'account_logout']) {
    const answer = await tool(name)
    t.equal(answer.status, 200, name)
    t.same(answer.json.result, { isError: true, content: [{ type: 'text', text: messages.tokenCookieNoReply }] }, name)
    t.notOk(answer.headers['set-cookie'], `${name}: no cookie claimed to be set`)
  }
  const plain = await tool('account_plainLogin')
  t.notOk(plain.json.result.isError, 'a token without a cookie is issued as before')
})

t.test("the defaults never override what the claims or the call name: exp, aud, iss", async (t) => {
  const { server } = await start(t, { verify: { allowedAud: 'api', allowedIss: 'https://login.example' } })
  const { getActions } = await import('../lib/index.js')
  const jwt = getActions(server.app).jwt!
  const exp = now() + 60
  const own = claimsOf(jwt.sign({ sub: 'x', exp, aud: 'other', iss: 'me' }))
  t.same({ exp: own.exp, aud: own.aud, iss: own.iss }, { exp, aud: 'other', iss: 'me' })
  const long = claimsOf(jwt.sign({ sub: 'x' }, { expiresIn: '2h' }))
  t.equal(Number(long.exp) - Number(long.iat), 7200)
})
