import t from 'tap'
import { createHmac, generateKeyPairSync, sign as rsaSign } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { createAction, createServer, Err, Ok, messages, type AuthConfig, type BeforeActionHandler, type Result, type Service } from '../lib/index.js'
import { DEFAULTS } from '../lib/index.js'
import { buildServer, execute, type TestConfig } from './helpers/server.js'

/** A subtest's `t`. */
type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const SECRET = 'a-test-secret-that-is-long-enough-for-hs256'
const reasons = messages.authReasons
const now = () => Math.floor(Date.now() / 1000)

// Tokens are built by hand here so the tests can also build the malicious ones the library must refuse.
const b64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')

function hs(payload: unknown, secret: string | Buffer = SECRET, alg = 'HS256'): string {
  const input = `${b64url({ alg, typ: 'JWT' })}.${b64url(payload)}`
  const digest = `sha${alg.slice(2)}`
  return `${input}.${createHmac(digest, secret).update(input).digest('base64url')}`
}

const keys = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
})

function rs256(payload: unknown): string {
  const input = `${b64url({ alg: 'RS256', typ: 'JWT' })}.${b64url(payload)}`
  return `${input}.${rsaSign('sha256', Buffer.from(input), keys.privateKey).toString('base64url')}`
}

const unsigned = (payload: unknown) => `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(payload)}.`

/** A protected action that reports the identity it sees, an open one, and an admin-only one; all count their runs. */
function secureService() {
  const calls = { whoami: 0, open: 0, admin: 0 }
  const whoami = createAction({
    name: 'whoami',
    description: 'The caller',
    isProtected: true,
    handler: (_data, context) => {
      calls.whoami++
      return Ok({ auth: context.getAuth(), user: context.getUser(), seenInHook: context.hookContext.state.seenInHook })
    },
  })
  const open = createAction({
    name: 'open',
    description: 'Needs no token',
    handler: (_data, context) => {
      calls.open++
      return Ok({ auth: context.getAuth() ?? null })
    },
  })
  const admin = createAction({
    name: 'admin',
    description: 'Admins only',
    isProtected: true,
    accessControl: ['admin'],
    handler: (_data, context) => {
      calls.admin++
      return Ok({ userId: context.getUser()?.userId })
    },
  })
  const service: Service = { name: 'secure', description: 'Auth tests', actions: [whoami, open, admin] }
  return { service, calls }
}

async function authServer(t: Tap, auth: AuthConfig | null = { secret: SECRET }, overrides: TestConfig = {}) {
  const secure = secureService()
  const server = await buildServer({ services: [secure.service], auth: auth ?? undefined, ...overrides })
  t.teardown(() => server.close())
  return Object.assign(server, { calls: secure.calls })
}

const whoami = (app: FastifyInstance, headers: Record<string, string> = {}) => execute(app, 'secure', 'whoami', {}, { headers })
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const denied = (reason: string) => ({ status: false, message: messages.authFailed(reason), data: {} })

t.test('defaults', async (t) => {
  t.same(DEFAULTS.auth, { method: 'header', headerName: 'authorization', cookieName: 'auth_token', algorithms: ['HS256'], expiresIn: '1h' })
})

t.test('the attack matrix: every bad token is a 401 envelope and neither the global handler nor the action runs', async (t) => {
  let beforeCalls = 0
  const onBeforeActionHandler: BeforeActionHandler = () => {
    beforeCalls++
    return Ok(null)
  }
  const server = await authServer(t, { secret: SECRET }, { onBeforeActionHandler })
  const exp = now() + 600
  const cases: Array<[string, Record<string, string>, string]> = [
    ['no header', {}, reasons.missingToken],
    ['empty header', { authorization: '' }, reasons.missingToken],
    ['Basic scheme', { authorization: 'Basic x' }, reasons.badScheme],
    ['Bearer alone', { authorization: 'Bearer' }, reasons.badScheme],
    ['Bearer with two parts', { authorization: 'Bearer a b' }, reasons.badScheme],
    ['token without scheme', { authorization: hs({ sub: 'u1', exp }) }, reasons.badScheme],
    ['garbage', bearer('garbage'), reasons.malformed],
    ['three garbage parts', bearer('a.b.c'), reasons.malformed],
    ['a payload that is not an object', bearer(hs('just a string')), reasons.malformed],
    ['bad signature', bearer(hs({ sub: 'u1', exp }, 'another-secret-entirely-of-some-length')), reasons.signature],
    ['tampered payload', bearer(`${hs({ sub: 'u1', exp }).split('.')[0]}.${b64url({ sub: 'admin', exp })}.${hs({ sub: 'u1', exp }).split('.')[2]}`), reasons.signature],
    ['expired', bearer(hs({ sub: 'u1', exp: now() - 30 })), reasons.expired],
    ['not yet valid (nbf)', bearer(hs({ sub: 'u1', nbf: now() + 3600 })), reasons.notYetValid],
    ["alg: none with an empty signature", bearer(unsigned({ sub: 'u1', exp })), reasons.unsigned],
    ["alg: none without a signature part", bearer(unsigned({ sub: 'u1', exp }).slice(0, -1)), reasons.malformed],
    ['RS256 signed with a private key (HS/RS swap)', bearer(rs256({ sub: 'u1', exp })), reasons.algorithm],
    ['HS256 keyed with the RSA public key', bearer(hs({ sub: 'u1', exp }, keys.publicKey)), reasons.signature],
    ['HS512 with the right secret (only HS256 allowed)', bearer(hs({ sub: 'u1', exp }, SECRET, 'HS512')), reasons.algorithm],
    ['no user id claim', bearer(hs({ organizationId: 'o1', role: 'admin', exp })), reasons.noUserId],
    ['an empty user id', bearer(hs({ userId: '', exp })), reasons.noUserId],
    ['a user id that is an object', bearer(hs({ userId: { id: 'u1' }, exp })), reasons.noUserId],
  ]
  for (const [name, headers, reason] of cases) {
    const answer = await whoami(server.app, headers)
    t.equal(answer.statusCode, 401, name)
    t.same(answer.body, denied(reason), name)
  }
  t.equal(server.calls.whoami, 0, 'the handler never ran')
  t.equal(beforeCalls, 0, 'the global before handler never ran')

  const ok = await whoami(server.app, bearer(hs({ sub: 'u1', exp })))
  t.equal(ok.statusCode, 200, 'the same server accepts a good token')
  t.equal(server.calls.whoami, 1)
  t.equal(beforeCalls, 1)
})

t.test('the same matrix through app.fetch', async (t) => {
  const server = await authServer(t)
  const call = (headers: Record<string, string>) =>
    server.app.fetch('/api/services', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ intent: 'execute', service: 'secure', action: 'whoami', payload: {} }),
    })
  for (const [headers, reason] of [
    [{}, reasons.missingToken],
    [{ authorization: 'Basic x' }, reasons.badScheme],
    [bearer(unsigned({ sub: 'u1' })), reasons.unsigned],
    [bearer(hs({ sub: 'u1', exp: now() - 1 })), reasons.expired],
  ] as const) {
    const response = await call(headers)
    t.equal(response.status, 401)
    t.same(await response.json(), denied(reason))
  }
  const ok = await call(bearer(hs({ sub: 'fetch-user' })))
  t.equal(ok.status, 200)
  t.match(await ok.json(), { status: true, data: { auth: { userId: 'fetch-user' } } })
  t.equal(server.calls.whoami, 1)
})

t.test('a valid token: getAuth() and getUser() in the handler, claims are the full payload', async (t) => {
  const server = await authServer(t)
  const claims = { sub: 'user-1', organizationId: 'org-1', role: 'editor', iat: now(), exp: now() + 600 }
  const answer = await whoami(server.app, bearer(hs(claims)))
  t.equal(answer.statusCode, 200)
  t.same(answer.body, {
    status: true,
    message: messages.executed('secure', 'whoami'),
    data: {
      auth: { userId: 'user-1', organizationId: 'org-1', claims },
      user: { ...claims, userId: 'user-1', organizationId: 'org-1' },
    },
  })
  t.equal((await whoami(server.app, { authorization: `bearer ${hs(claims)}` })).statusCode, 200, 'the scheme is case-insensitive')
})

t.test('tokens from app.jwt.sign (for login actions and custom routes) are accepted', async (t) => {
  const server = await authServer(t)
  const token = server.app.jwt.sign({ userId: 'signed-by-app', orgId: 'o9' }, { expiresIn: 60 })
  const answer = await whoami(server.app, bearer(token))
  t.equal(answer.statusCode, 200)
  t.match(answer.body.data, { auth: { userId: 'signed-by-app', organizationId: 'o9' } })
})

t.test('identity claim aliases: userId, id, sub (first present); organizationId, organization_id, orgId', async (t) => {
  const server = await authServer(t)
  const cases: Array<[Record<string, unknown>, { userId: string; organizationId?: string }]> = [
    [{ userId: 'a', id: 'b', sub: 'c' }, { userId: 'a' }],
    [{ id: 'b', sub: 'c' }, { userId: 'b' }],
    [{ sub: 'c' }, { userId: 'c' }],
    [{ id: 42 }, { userId: '42' }],
    [{ userId: '', sub: 'c' }, { userId: 'c' }],
    [{ sub: 'c', organizationId: 'o1', organization_id: 'o2', orgId: 'o3' }, { userId: 'c', organizationId: 'o1' }],
    [{ sub: 'c', organization_id: 'o2', orgId: 'o3' }, { userId: 'c', organizationId: 'o2' }],
    [{ sub: 'c', orgId: 'o3' }, { userId: 'c', organizationId: 'o3' }],
    [{ sub: 'c', orgId: 7 }, { userId: 'c', organizationId: '7' }],
  ]
  for (const [claims, identity] of cases) {
    const answer = await whoami(server.app, bearer(hs(claims)))
    t.equal(answer.statusCode, 200, JSON.stringify(claims))
    t.same(answer.body.data.auth, { ...identity, claims }, JSON.stringify(claims))
  }
})

t.test('method: cookie reads the auth_token cookie (or cookieName) and ignores the header', async (t) => {
  const server = await authServer(t, { secret: SECRET, method: 'cookie' })
  const token = hs({ sub: 'cookie-user' })
  const viaCookie = await whoami(server.app, { cookie: `theme=dark; auth_token=${token}` })
  t.equal(viaCookie.statusCode, 200)
  t.match(viaCookie.body.data, { auth: { userId: 'cookie-user' } })

  const viaHeader = await whoami(server.app, bearer(token))
  t.equal(viaHeader.statusCode, 401)
  t.same(viaHeader.body, denied(reasons.missingToken))
  t.same((await whoami(server.app, { cookie: 'auth_token=garbage' })).body, denied(reasons.malformed))
  t.same((await whoami(server.app, { cookie: `auth_token=${hs({ sub: 'x' }, 'wrong-secret-wrong-secret-wrong')}` })).body, denied(reasons.signature))

  const custom = await authServer(t, { secret: SECRET, method: 'cookie', cookieName: 'session' })
  const response = await custom.app.fetch('/api/services', {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: `session=${token}` },
    body: JSON.stringify({ intent: 'execute', service: 'secure', action: 'whoami', payload: {} }),
  })
  t.equal(response.status, 200)
  t.match(await response.json(), { data: { auth: { userId: 'cookie-user' } } })
  t.same((await whoami(custom.app, { cookie: `auth_token=${token}` })).body, denied(reasons.missingToken))
  t.equal(server.calls.whoami + custom.calls.whoami, 2)
})

t.test('a custom headerName carries the Bearer token; Authorization is then ignored', async (t) => {
  const server = await authServer(t, { secret: SECRET, headerName: 'X-Access-Token' })
  const token = hs({ sub: 'header-user' })
  const answer = await whoami(server.app, { 'x-access-token': `Bearer ${token}` })
  t.equal(answer.statusCode, 200)
  t.match(answer.body.data, { auth: { userId: 'header-user' } })
  t.same((await whoami(server.app, bearer(token))).body, denied(reasons.missingToken))
  t.same((await whoami(server.app, { 'x-access-token': token })).body, denied(reasons.badScheme))
})

t.test('algorithms: RS256 with a public key accepts RS256 and refuses the HS256-with-public-key swap', async (t) => {
  const server = await authServer(t, { secret: keys.publicKey, algorithms: ['RS256'] })
  const ok = await whoami(server.app, bearer(rs256({ sub: 'rsa-user' })))
  t.equal(ok.statusCode, 200)
  t.match(ok.body.data, { auth: { userId: 'rsa-user' } })
  const swapped = await whoami(server.app, bearer(hs({ sub: 'rsa-user' }, keys.publicKey)))
  t.equal(swapped.statusCode, 401)
  t.same(swapped.body, denied(reasons.algorithm))
  t.same((await whoami(server.app, bearer(unsigned({ sub: 'rsa-user' })))).body, denied(reasons.unsigned))
  t.equal(server.calls.whoami, 1)
})

t.test('actions without isProtected never touch auth; without auth config isProtected is not checked', async (t) => {
  const server = await authServer(t)
  for (const headers of [{}, { authorization: 'Bearer garbage' }, bearer(hs({ sub: 'u1', exp: now() - 10 }))]) {
    const answer = await execute(server.app, 'secure', 'open', {}, { headers })
    t.equal(answer.statusCode, 200)
    t.same(answer.body, { status: true, message: messages.executed('secure', 'open'), data: { auth: null } })
  }

  const unconfigured = await authServer(t, null)
  const answer = await whoami(unconfigured.app)
  t.equal(answer.statusCode, 200)
  t.same(answer.body, { status: true, message: messages.executed('secure', 'whoami'), data: {} }, 'no identity, no failure')
  t.notOk(unconfigured.app.hasDecorator('jwt'), '@fastify/jwt is not registered without auth')
})

t.test('a protected action executed outside an HTTP request is refused', async (t) => {
  const server = await authServer(t)
  const result = await server.engine.executeAction('secure', 'whoami', {}, server.context)
  t.same(result, { ok: false, error: messages.authFailed(reasons.noRequest), code: 'FA_ERR_AUTH', data: {} })
  t.equal(server.calls.whoami, 0)
})

t.test('bad auth config fails at boot', async (t) => {
  const boot = (auth: AuthConfig) =>
    createServer({
      serverName: 'bad-auth',
      logServices: false,
      forceNewInstance: true,
      services: [secureService().service],
      auth,
      rest: { baseUrl: '/api', allowedOrigins: [] },
    })
  await t.rejects(boot({ secret: '' }), { message: messages.authNoSecret })
  await t.rejects(boot({ secret: SECRET, method: 'query' as 'header' }), { message: messages.authBadMethod('query') })
  await t.rejects(boot({ secret: SECRET, algorithms: [] }), { message: messages.authBadAlgorithms })
  await t.rejects(boot({ secret: SECRET, algorithms: ['HS256', 'none'] }), { message: messages.authBadAlgorithms })
})

t.test('onBeforeActionHandler sees the identity; the RBAC example denies by role with Err', async (t) => {
  const seen: unknown[] = []
  // The sample check of the specification: the action's first accessControl entry against the user's role.
  const onBeforeActionHandler: BeforeActionHandler = ({ nileContext, action }) => {
    const user = nileContext.getUser()
    seen.push({ action: action.name, auth: nileContext.getAuth(), user })
    const required = action.accessControl?.[0]
    if (required !== undefined && user?.role !== required) return Err(`Forbidden: role '${required}' required`)
    return Ok(null)
  }
  const server = await authServer(t, { secret: SECRET }, { onBeforeActionHandler })
  const member = hs({ sub: 'm1', role: 'member' })
  const admin = hs({ sub: 'a1', role: 'admin', orgId: 'o1' })

  const refused = await execute(server.app, 'secure', 'admin', {}, { headers: bearer(member) })
  t.equal(refused.statusCode, 400)
  t.same(refused.body, { status: false, message: "Forbidden: role 'admin' required", data: {} })
  t.equal(server.calls.admin, 0)

  const allowed = await execute(server.app, 'secure', 'admin', {}, { headers: bearer(admin) })
  t.equal(allowed.statusCode, 200)
  t.same(allowed.body, { status: true, message: messages.executed('secure', 'admin'), data: { userId: 'a1' } })
  t.same(seen, [
    { action: 'admin', auth: { userId: 'm1', claims: { sub: 'm1', role: 'member' } }, user: { sub: 'm1', role: 'member', userId: 'm1', organizationId: undefined } },
    {
      action: 'admin',
      auth: { userId: 'a1', organizationId: 'o1', claims: { sub: 'a1', role: 'admin', orgId: 'o1' } },
      user: { sub: 'a1', role: 'admin', orgId: 'o1', userId: 'a1', organizationId: 'o1' },
    },
  ])

  // An unprotected action reaches the global handler with no identity.
  await execute(server.app, 'secure', 'open', {}, { headers: bearer(admin) })
  t.same(seen[2], { action: 'open', auth: undefined, user: undefined })
})

t.test('300 concurrent requests with distinct users each see only their own identity', async (t) => {
  const tick = () => new Promise<void>((resolve) => setImmediate(resolve))
  const onBeforeActionHandler: BeforeActionHandler = async ({ nileContext }) => {
    await tick()
    nileContext.updateHookState('seenInHook', nileContext.getAuth()?.userId)
    await tick()
    return Ok(null)
  }
  const secure = secureService()
  const whoamiAction = secure.service.actions[0]
  const slowWhoami = {
    ...whoamiAction,
    handler: async (data: unknown, context: Parameters<typeof whoamiAction.handler>[1]) => {
      await tick()
      await tick()
      return (await whoamiAction.handler(data, context)) as Result<unknown, string>
    },
  }
  const server = await buildServer({
    services: [{ ...secure.service, actions: [slowWhoami] }],
    auth: { secret: SECRET },
    onBeforeActionHandler,
  })
  t.teardown(() => server.close())

  const users = Array.from({ length: 300 }, (_, i) => ({ sub: `user-${i}`, orgId: `org-${i % 7}`, n: i }))
  const answers = await Promise.all(users.map((claims) => whoami(server.app, bearer(hs(claims)))))
  let mismatches = 0
  answers.forEach((answer, i) => {
    const { sub, orgId } = users[i]
    const data = answer.body.data
    const own =
      answer.statusCode === 200 &&
      data.auth.userId === sub &&
      data.auth.organizationId === orgId &&
      data.auth.claims.n === i &&
      data.user.userId === sub &&
      data.seenInHook === sub
    if (!own) mismatches++
  })
  t.equal(mismatches, 0, 'every request saw its own identity in the hook and in the handler')
  t.equal(secure.calls.whoami, 300)
})

t.test('cookie auth refuses cross-site requests from origins not in allowedOrigins (CSRF)', async (t) => {
  const server = await authServer(t, { secret: SECRET, method: 'cookie' }, { rest: { allowedOrigins: ['https://app.example'] } })
  const cookie = `auth_token=${hs({ sub: 'victim' })}`
  const cases: [string, Record<string, string>, number][] = [
    ['a listed origin', { origin: 'https://app.example' }, 200],
    ['the server’s own origin', { origin: 'http://api.local:8080', host: 'api.local:8080' }, 200],
    ['no Origin and no Sec-Fetch-Site (curl, a server)', {}, 200],
    ['no Origin, same-site fetch metadata', { 'sec-fetch-site': 'same-origin' }, 200],
    ['another site', { origin: 'https://evil.example' }, 401],
    ['an opaque origin', { origin: 'null' }, 401],
    ['no Origin but cross-site fetch metadata', { 'sec-fetch-site': 'cross-site' }, 401],
  ]
  for (const [name, headers, status] of cases) {
    const answer = await whoami(server.app, { cookie, ...headers })
    t.equal(answer.statusCode, status, name)
    if (status === 401) t.same(answer.body, denied(reasons.crossSite), name)
  }
  const calls = server.calls.whoami
  const form = new FormData()
  for (const [key, value] of Object.entries({ intent: 'execute', service: 'secure', action: 'whoami' })) form.append(key, value)
  const response = await server.app.fetch('/api/services', { method: 'POST', body: form, headers: { cookie, origin: 'https://evil.example' } })
  t.equal(response.status, 401, 'a cross-site multipart form post is refused too')
  t.equal(server.calls.whoami, calls, 'the handler never ran')

  const header = await authServer(t, { secret: SECRET })
  const viaHeader = await whoami(header.app, { ...bearer(hs({ sub: 'api-client' })), origin: 'https://evil.example' })
  t.equal(viaHeader.statusCode, 200, 'header tokens are not sent by browsers on their own: no CSRF check')
})
