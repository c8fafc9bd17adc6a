import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import cors from '@fastify/cors'
import jwt from '@fastify/jwt'
import multipart from '@fastify/multipart'
import type { AddressInfo } from 'node:net'
import { createAction, fastifyActions, getActions, messages, Ok, signToken, type Service } from '../lib/index.js'
import { echoService } from './helpers/fixtures.js'
import { rawTarget as rawRequest } from './helpers/raw-target.js'
import { filesService, pdf } from './helpers/uploads.js'

// The plugin inside apps that already have their own CORS, JWT or multipart at the root, or a second
// registration beside it: it mounts beside them, and answers preflights for its own routes only.

const secret = 'a-secret-of-at-least-thirty-two-characters'
const whoami = createAction({ name: 'whoami', description: 'Protected', isProtected: true, handler: (_data, context) => Ok({ user: context.getUser()?.userId }) })
const login = createAction({ name: 'login', description: 'Issues a token', handler: () => signToken({ sub: 'from-login' }) })
const account: Service = { name: 'account', description: 'Account', actions: [whoami, login] }
const json = { 'content-type': 'application/json' }
const list = JSON.stringify({ intent: 'execute', service: 'tasks', action: 'list', payload: {} })

async function listen(app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return (app.server.address() as AddressInfo).port
}

t.test('a host with @fastify/cors at its root: register resolves, the host policy answers for both', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(cors, { origin: 'https://host.example' })
  await app.register(fastifyActions, { serverName: 'p', services: [echoService], rest: { baseUrl: '/api', allowedOrigins: ['https://a.example'] } })
  const port = await listen(app)
  const run = await rawRequest(port, 'POST', '/api/services', { ...json, origin: 'https://host.example' }, list)
  t.equal(run.status, 200)
  t.equal(run.headers['access-control-allow-origin'], 'https://host.example', "the host's policy")
  const preflight = await rawRequest(port, 'OPTIONS', '/api/services', { origin: 'https://host.example', 'access-control-request-method': 'POST' })
  t.equal(preflight.status, 204)
})

t.test('a host with @fastify/jwt at its root: each verifies its own tokens', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(jwt, { secret: 'the-host-secret-the-host-secret-0123' })
  app.get('/host/me', async (request) => {
    await request.jwtVerify()
    return { host: (request.user as { sub: string }).sub }
  })
  await app.register(fastifyActions, { serverName: 'p', services: [account], auth: { secret }, rest: { baseUrl: '/api', allowedOrigins: [], openapi: { actionRoutes: true } } })
  const port = await listen(app)
  const ours = getActions(app).jwt!.sign({ sub: 'u1' })
  const hosts = app.jwt.sign({ sub: 'h1' })
  const run = await rawRequest(port, 'POST', '/api/services/account/whoami', { ...json, authorization: `Bearer ${ours}` }, '{}')
  t.equal(run.status, 200)
  t.same(JSON.parse(run.body), { status: true, message: messages.executed('account', 'whoami'), data: { user: 'u1' } })
  const foreign = await rawRequest(port, 'POST', '/api/services/account/whoami', { ...json, authorization: `Bearer ${hosts}` }, '{}')
  t.equal(foreign.status, 401, "the host's token is not ours")
  const host = await rawRequest(port, 'GET', '/host/me', { authorization: `Bearer ${hosts}` })
  t.same(JSON.parse(host.body), { host: 'h1' }, "the host's own JWT is untouched")
  const issued = await rawRequest(port, 'POST', '/api/services/account/login', json, '{}')
  t.equal(issued.status, 200, 'signToken signs with this registration')
  const token = JSON.parse(issued.body).data.result
  const withIssued = await rawRequest(port, 'POST', '/api/services/account/whoami', { ...json, authorization: `Bearer ${token}` }, '{}')
  t.same(JSON.parse(withIssued.body).data, { user: 'from-login' })
})

t.test('a host with @fastify/multipart at its root: uploads use it, with this registration’s limits', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(multipart)
  await app.register(fastifyActions, { serverName: 'p', services: [filesService], rest: { baseUrl: '/api', allowedOrigins: [], uploads: { limits: { maxFileSize: 100 } } } })
  const port = await listen(app)
  const url = `http://127.0.0.1:${port}/api/services`
  const form = (file: File) => {
    const body = new FormData()
    for (const [name, value] of [['intent', 'execute'], ['service', 'files'], ['action', 'flat']]) body.append(name, value)
    body.append('doc', file)
    return body
  }
  const ok = await fetch(url, { method: 'POST', body: form(pdf()) })
  t.equal(ok.status, 200)
  t.match(await ok.json(), { status: true, data: { files: { doc: { name: 'a.pdf' } } } })
  const big = await fetch(url, { method: 'POST', body: form(new File([Buffer.alloc(500, 0x25)], 'big.pdf', { type: 'application/pdf' })) })
  t.equal(big.status, 400, 'maxFileSize holds with the host parser')
  t.match(await big.json(), { status: false, message: messages.uploadLimitExceeded, data: { limit: 'maxFileSize', max: 100 } })
})

t.test('without a prefix, preflights cover the plugin’s own routes only; two registrations live side by side', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  app.post('/host/account', async () => ({ host: true }))
  await app.register(fastifyActions, { serverName: 'one', services: [echoService], rest: { baseUrl: '/api', allowedOrigins: ['https://a.example'], cors: { defaults: { credentials: true } } } })
  await app.register(fastifyActions, { name: 'two', serverName: 'two', services: [echoService], rest: { baseUrl: '/api2', allowedOrigins: ['https://b.example'] } })
  const port = await listen(app)
  const preflight = (path: string, origin: string) =>
    rawRequest(port, 'OPTIONS', path, { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' })

  const host = await preflight('/host/account', 'https://a.example')
  t.equal(host.headers['access-control-allow-origin'], undefined, "no preflight passes for the host's route")
  t.not(host.status, 204)
  const hostEncoded = await preflight('/%68ost/account', 'https://a.example')
  t.equal(hostEncoded.headers['access-control-allow-origin'], undefined)

  const one = await preflight('/api/services', 'https://a.example')
  t.equal(one.status, 204)
  t.equal(one.headers['access-control-allow-origin'], 'https://a.example')
  t.equal(one.headers['access-control-allow-credentials'], 'true')
  const oneEncoded = await preflight('/%61pi/services', 'https://a.example')
  t.equal(oneEncoded.headers['access-control-allow-origin'], 'https://a.example', 'the routed path decides')
  const two = await preflight('/api2/services', 'https://b.example')
  t.equal(two.status, 204)
  t.equal(two.headers['access-control-allow-origin'], 'https://b.example', 'the second registration answers its own')
  const crossed = await preflight('/api2/services', 'https://a.example')
  t.equal(crossed.headers['access-control-allow-origin'], undefined, "the first registration's origin is not the second's")
  const run = await rawRequest(port, 'POST', '/api2/services', json, list)
  t.equal(run.status, 200)
})
