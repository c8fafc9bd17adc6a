import t, { type Test } from 'tap'
import Type from 'typebox'
import { Writable } from 'node:stream'
import { createAction, messages, Ok, type LogEntry, type Service, type ServiceLogger } from '../../lib/index.js'
import { buildServer, execute } from '../helpers/server.js'

// Finding 8, tried as a new user would: (a) `request.jwtVerify()` in a custom route without a
// token; (b) an `additionalProperties: false` violation answered a second error `schema is false`;
// (c) an `isProtected` action on a server without `auth` ran for anyone, without a word.

const SECRET = 'a-test-secret-that-is-long-enough'

const secret = createAction({ name: 'secret', description: 'Protected', isProtected: true, handler: () => Ok({ secret: 42 }) })
const strict = createAction({
  name: 'strict',
  description: 'No extra properties',
  validation: Type.Object({ title: Type.String(), nested: Type.Optional(Type.Object({ x: Type.Number() }, { additionalProperties: false })) }, { additionalProperties: false }),
  handler: (data) => Ok({ title: data.title }),
})
const service: Service = { name: 'svc', description: 'Hostile probes', actions: [secret, strict] }

const missingToken = { status: false, message: messages.authFailed(messages.authReasons.missingToken), data: {} }

async function withAuth(t: Test) {
  const server = await buildServer({ services: [service], auth: { secret: SECRET } })
  server.app.get('/me', async (request) => ({ status: true, message: 'me', data: await request.jwtVerify() }))
  t.teardown(() => server.close())
  return server.app
}

t.test('a missing token answers the same 401 envelope in a custom route (jwtVerify) and on a protected action', async (t) => {
  const app = await withAuth(t)
  const custom = await app.inject({ method: 'GET', url: '/me' })
  t.equal(custom.statusCode, 401)
  t.same(custom.json(), missingToken)
  const action = await execute(app, 'svc', 'secret')
  t.equal(action.statusCode, 401)
  t.same(action.body, missingToken)
  // A bad token too: a 401 envelope, never @fastify/jwt's own shape.
  const bad = await app.inject({ method: 'GET', url: '/me', headers: { authorization: 'Bearer not.a.token' } })
  t.equal(bad.statusCode, 401)
  t.same(bad.json(), { status: false, message: messages.authFailed(messages.authReasons.invalid), data: {} })
  const signed = app.jwt.sign({ sub: 'u1' })
  const good = await app.inject({ method: 'GET', url: '/me', headers: { authorization: `Bearer ${signed}` } })
  t.equal(good.statusCode, 200)
  t.match(good.json(), { status: true, data: { sub: 'u1' } })
})

t.test('one readable error per validation failure: no derivative `schema is false`', async (t) => {
  const server = await buildServer({ services: [service] })
  t.teardown(() => server.close())
  const extra = await execute(server.app, 'svc', 'strict', { title: 'a', extra: 1, more: 2 })
  t.equal(extra.statusCode, 400)
  t.same(extra.body, {
    status: false,
    message: messages.validationFailed,
    data: { errors: [{ path: '', message: "must not have additional properties: 'extra', 'more'" }] },
  })
  const nested = await execute(server.app, 'svc', 'strict', { title: 1, nested: { x: 1, y: 2 } })
  t.same(nested.body.data.errors, [
    { path: '/title', message: 'must be string' },
    { path: '/nested', message: "must not have additional properties: 'y'" },
  ])
})

function captureLogger(): ServiceLogger & { warnings: LogEntry[] } {
  const warnings: LogEntry[] = []
  const id = () => 'log-1'
  return { warnings, info: id, error: id, warn: (entry) => (warnings.push(entry), 'log-1') }
}

t.test('protected actions on a server without auth: one boot warning through resources.logger', async (t) => {
  const logger = captureLogger()
  const server = await buildServer({ services: [service], resources: { logger } })
  t.teardown(() => server.close())
  t.same(logger.warnings, [{ atFunction: 'createServer', message: messages.protectedWithoutAuth('svc.secret'), data: undefined }])
  // The behaviour itself is the specification's: it runs.
  t.equal((await execute(server.app, 'svc', 'secret')).statusCode, 200)
})

t.test("... through Fastify's logger when there is no resources.logger", async (t) => {
  const lines: Array<{ level: number; msg: string }> = []
  const stream = new Writable({ write: (chunk, _encoding, done) => (lines.push(JSON.parse(String(chunk))), done()) })
  const server = await buildServer({ services: [service], rest: { fastify: { logger: { level: 'info', stream } } } })
  t.teardown(() => server.close())
  const warning = lines.find((line) => line.msg === messages.protectedWithoutAuth('svc.secret'))
  t.ok(warning, 'logged')
  t.equal(warning?.level, 40, 'at level warn')
})

t.test('no warning with auth, or without protected actions', async (t) => {
  const withAuthLogger = captureLogger()
  const a = await buildServer({ services: [service], auth: { secret: SECRET }, resources: { logger: withAuthLogger } })
  t.teardown(() => a.close())
  t.same(withAuthLogger.warnings, [])
  const plain = captureLogger()
  const b = await buildServer({ services: [{ ...service, actions: [strict] }], resources: { logger: plain } })
  t.teardown(() => b.close())
  t.same(plain.warnings, [])
})
