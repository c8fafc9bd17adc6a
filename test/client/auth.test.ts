import t from 'tap'
import { messages } from '../../lib/index.js'
import { clientErrorCodes, clientMessages, createClient, type FetchLike } from '../../lib/client/index.js'
import { clientServer, listen, SECRET, type Services } from './fixtures.js'

// Auth by bearer token (a string, or a function called per request) and by cookie; tokens issued
// by an action with signToken.

const empty = {}

for (const transport of ['socket', 'app.fetch'] as const) {
  t.test(`bearer token over ${transport}`, async (t) => {
    const server = await clientServer()
    t.teardown(() => server.close())
    const socket = transport === 'socket'
    const baseUrl = socket ? await listen(server.app) : 'http://localhost/api'
    const fetch = socket ? undefined : (server.app.fetch as FetchLike)
    const sign = (claims: Record<string, unknown>) => server.app.jwt.sign(claims)

    const fixed = createClient<Services>({ baseUrl, fetch, token: sign({ sub: 'ada' }) })
    t.same(await fixed.account.me(), { ok: true, value: { userId: 'ada' } })

    let calls = 0
    const users = ['bob', undefined, 'cy']
    const rotating = createClient<Services>({ baseUrl, fetch, token: async () => {
      const user = users[calls++]
      return user && sign({ sub: user })
    } })
    t.same(await rotating.account.me(), { ok: true, value: { userId: 'bob' } })
    t.same(await rotating.account.me(), {
      ok: false,
      error: { status: false, message: messages.authFailed(messages.authReasons.missingToken), data: empty, httpStatus: 401 },
    }, 'no token when the function answers undefined')
    t.same(await rotating.account.me(), { ok: true, value: { userId: 'cy' } })
    t.equal(calls, 3, 'called once per request')

    const failing = new Error('refresh failed')
    const throwing = createClient<Services>({ baseUrl, fetch, token: () => Promise.reject(failing) })
    t.same(await throwing.account.me(), {
      ok: false,
      error: { status: false, message: clientMessages.tokenFailed('refresh failed'), data: empty, httpStatus: 0, code: clientErrorCodes.badInput, cause: failing },
    }, 'a token function that fails: nothing is sent')

    const bad = createClient<Services>({ baseUrl, fetch, token: 'not.a.jwt' })
    t.same(await bad.account.me(), {
      ok: false,
      error: { status: false, message: messages.authFailed(messages.authReasons.malformed), data: empty, httpStatus: 401 },
    })

    const login = await createClient<Services>({ baseUrl, fetch }).account.login({ user: 'dee' })
    t.ok(login.ok, 'signToken issues a token')
    if (!login.ok) return
    const claims = JSON.parse(Buffer.from(login.value.token.split('.')[1], 'base64url').toString()) as { sub: string; iat: number; exp: number }
    t.equal(claims.sub, 'dee')
    t.equal(claims.exp - claims.iat, 3600, "expiresIn '1h'")
    t.same(await createClient<Services>({ baseUrl, fetch, token: login.value.token }).account.me(), { ok: true, value: { userId: 'dee' } })
    t.same(await createClient<Services>({ baseUrl, fetch }).account.login({ user: 'dee', cookie: true }), {
      ok: false,
      error: { status: false, message: messages.tokenNoCookies, data: empty, httpStatus: 400 },
    }, 'a cookie needs auth.method cookie')
  })

  t.test(`cookie over ${transport}`, async (t) => {
    const server = await clientServer({ auth: { secret: SECRET, method: 'cookie' } })
    t.teardown(() => server.close())
    const socket = transport === 'socket'
    const baseUrl = socket ? await listen(server.app) : 'http://localhost/api'
    const fetch = socket ? undefined : (server.app.fetch as FetchLike)

    // Node's fetch keeps no cookie jar: the test carries the cookie the login set, as a browser would.
    let cookie = ''
    const jar: FetchLike = async (input, init) => {
      const headers = new Headers(init?.headers)
      if (cookie) headers.set('cookie', cookie)
      const response = await (fetch ?? globalThis.fetch)(input, { ...init, headers })
      const set = response.headers.getSetCookie()
      if (set.length > 0) cookie = set.map((line) => line.split(';')[0]).join('; ')
      return response
    }
    const client = createClient<Services>({ baseUrl, fetch: jar, credentials: 'include' })
    t.same(await client.account.me(), {
      ok: false,
      error: { status: false, message: messages.authFailed(messages.authReasons.missingToken), data: empty, httpStatus: 401 },
    })
    const login = await client.account.login({ user: 'eve', cookie: true })
    t.ok(login.ok)
    t.match(cookie, /^auth_token=[\w-]+\.[\w-]+\.[\w-]+$/)
    t.same(await client.account.me(), { ok: true, value: { userId: 'eve' } })
  })
}
