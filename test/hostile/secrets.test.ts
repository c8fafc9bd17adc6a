/**
 * Issue 40, "no default secret anywhere": the template's compose file shipped
 * `JWT_SECRET: ${JWT_SECRET:-change-me-to-32-random-bytes}`, so the production guard never fired and a
 * token forged with that public default logged in as anyone (`account.me` → 200). Now the framework
 * refuses at boot, in production, an HMAC secret under 32 bytes or a known placeholder; the template's
 * own guard covers every secret it reads; compose.yaml has no default for any secret and publishes
 * the app on 127.0.0.1 only.
 */
import { readFileSync } from 'node:fs'
import { createSigner } from 'fast-jwt'
import t from 'tap'
import { createAction, createServer, messages, Ok, type AuthConfig } from '../../lib/index.js'
import { requireSecrets, secretProblem } from '../../template/project/src/secrets.js'

const OLD_DEFAULT = 'change-me-to-32-random-bytes'
const REAL = 'Vq3mN8xT1pL6yR0wK4zH7cJ2bF9dS5gA' // 32 bytes, not a placeholder

const me = createAction({ name: 'me', description: 'Who am I', isProtected: true, handler: (_data, context) => Ok({ user: context.getUser()?.userId }) })

function boot(auth: AuthConfig) {
  return createServer({
    serverName: 'secrets',
    logServices: false,
    forceNewInstance: true,
    services: [{ name: 'account', description: 'Accounts', actions: [me] }],
    auth,
    rest: { baseUrl: '/api', allowedOrigins: [] },
  })
}

function production(t: { teardown(fn: () => void): void }) {
  const before = process.env.NODE_ENV
  process.env.NODE_ENV = 'production'
  t.teardown(() => {
    if (before === undefined) delete process.env.NODE_ENV
    else process.env.NODE_ENV = before
  })
}

t.test('production: a placeholder or a short HMAC secret is refused at boot with FA_ERR_CONFIG', async (t) => {
  production(t)
  for (const secret of [OLD_DEFAULT, 'change-me', 'CHANGE_ME', 'changeme-please-0123456789abcdefghijkl', 'your-jwt-secret', 'secret', 'your_secret_here_0123456789abcdefghijk']) {
    await t.rejects(boot({ secret }), { code: 'FA_ERR_CONFIG', message: messages.authPlaceholderSecret }, secret)
  }
  await t.rejects(boot({ secret: 'x7Qp2' }), { code: 'FA_ERR_CONFIG', message: messages.authShortSecret(5, 32) })
  await t.rejects(boot({ secret: REAL.slice(1) }), { code: 'FA_ERR_CONFIG', message: messages.authShortSecret(31, 32) })
  t.equal(messages.authShortSecret(5, 32), 'createServer: auth.secret is 5 bytes; in production an HMAC secret needs at least 32 (e.g. `openssl rand -base64 32`)')
  const server = await boot({ secret: REAL, algorithms: ['HS256'] })
  await server.close()
})

t.test('outside production a short secret still boots (tests, development)', async (t) => {
  const server = await boot({ secret: 'x7Qp2' })
  await server.close()
})

t.test('a token forged with the old compose default is refused by a server with a real secret', async (t) => {
  production(t)
  const server = await boot({ secret: REAL })
  t.teardown(() => server.close())
  const app = server.rest!.app
  const call = (token: string) =>
    app.inject({ method: 'POST', url: '/api/services', headers: { authorization: `Bearer ${token}` }, payload: { intent: 'execute', service: 'account', action: 'me', payload: {} } })
  const forged = await call(createSigner({ key: OLD_DEFAULT, expiresIn: 600_000 })({ sub: 'admin' }))
  t.equal(forged.statusCode, 401)
  t.same(forged.json(), { status: false, message: 'Authentication failed: invalid signature', data: {} })
  const real = await call(createSigner({ key: REAL, expiresIn: 600_000 })({ sub: 'alice' }))
  t.equal(real.statusCode, 200)
  t.same(real.json().data, { user: 'alice' })
})

t.test('the template: every secret it reads is required in production, in one line', async (t) => {
  t.equal(secretProblem(undefined), 'is not set')
  t.equal(secretProblem(''), 'is not set')
  t.equal(secretProblem(OLD_DEFAULT), 'is a published placeholder')
  t.equal(secretProblem('change-me'), 'is a published placeholder')
  t.equal(secretProblem('short-but-random-9f3'), 'is 20 bytes, at least 32 needed')
  t.equal(secretProblem(REAL), undefined)
  t.throws(() => requireSecrets({ DISCOVERY_SECRET: 'change-me', JWT_SECRET: '' }, ['DISCOVERY_SECRET', 'JWT_SECRET']), {
    message: 'NODE_ENV=production: DISCOVERY_SECRET is a published placeholder; JWT_SECRET is not set (make one with: openssl rand -base64 32)',
  })
  t.doesNotThrow(() => requireSecrets({ DISCOVERY_SECRET: REAL, JWT_SECRET: REAL }, ['DISCOVERY_SECRET', 'JWT_SECRET']))
  const config = readFileSync(new URL('../../template/project/src/config.ts', import.meta.url), 'utf8')
  t.match(config, /const secrets = \['DISCOVERY_SECRET'\]\n\/\/ auth:start\nsecrets\.push\('JWT_SECRET'\)/)
  t.match(config, /if \(production\) requireSecrets\(env, secrets\)/)
})

t.test('the template compose file: no default secret, the app on 127.0.0.1 unless told otherwise', async (t) => {
  const compose = readFileSync(new URL('../../template/project/compose.yaml', import.meta.url), 'utf8')
  t.notMatch(compose, /SECRET[^\n]*:-/, 'no ${NAME:-default} for any secret')
  t.match(compose, /DISCOVERY_SECRET: \$\{DISCOVERY_SECRET:\?set DISCOVERY_SECRET/)
  t.match(compose, /JWT_SECRET: \$\{JWT_SECRET:\?set JWT_SECRET/)
  t.match(compose, /- "\$\{APP_PUBLISH:-127\.0\.0\.1:8000\}:8000"/)
  t.notMatch(compose, /- "8000:8000"/)
  const example = readFileSync(new URL('../../template/project/env.example', import.meta.url), 'utf8')
  t.notMatch(example, /change-me/)
  const readme = readFileSync(new URL('../../template/project/README.md', import.meta.url), 'utf8')
  t.match(readme, /openssl rand -base64 32/)
})
