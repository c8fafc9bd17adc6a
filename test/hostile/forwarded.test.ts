/**
 * Issue 40: trust that came from a header. Over real sockets:
 * - `X-Forwarded-Host` overrode the Host allowlist with `trustProxy` on (`Host: attacker.example` plus
 *   `X-Forwarded-Host: localhost` → 200 on openapi.json and per-action routes): forwarded headers now
 *   count only from a peer `trustProxy` trusts, and with `trustProxy: true` (every peer) the Host the
 *   client named must pass too;
 * - an absolute-form target's authority did not replace Host, and two Host headers were served
 *   (RFC 9112 §3.2: 400);
 * - the client key fell back to the constant `unknown-client`, and rotating `X-Forwarded-For` bought a
 *   fresh budget: the key is now the limiting header, else `request.ip`.
 */
import { connect, type AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { createAction, messages, Ok, type Service } from '../../lib/index.js'
import { echoService } from '../helpers/fixtures.js'
import { rawRequest } from '../helpers/raw-http.js'
import { buildServer, type TestConfig } from '../helpers/server.js'

const hostRefused = { status: false, message: messages.hostNotAllowed, data: {} }
const json = { 'content-type': 'application/json' }
const echoBody = JSON.stringify({ title: 'a', count: 1 })

async function listening(t: Test, config: TestConfig = {}) {
  const server = await buildServer({ services: [echoService], ...config, rest: { openapi: { enabled: true, reference: false }, ...(config.rest || {}) } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  return { server, port: (server.app.server.address() as AddressInfo).port }
}

const openapi = (port: number, headers: Record<string, string>) => rawRequest(port, { path: '/api/openapi.json', headers })
const echo = (port: number, headers: Record<string, string>) => rawRequest(port, { method: 'POST', path: '/api/services/tasks/echo', headers: { ...json, ...headers }, body: echoBody })

/** One request written byte for byte (two Host lines, an absolute-form target), read to the close. */
function rawLines(port: number, lines: string[], body = ''): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      resolve({ status: Number(text.split(' ')[1]), body: text.slice(text.indexOf('\r\n\r\n') + 4) })
    })
    socket.write(`${[...lines, 'connection: close', `content-length: ${Buffer.byteLength(body)}`].join('\r\n')}\r\n\r\n${body}`)
  })
}

t.test('trustProxy: true: X-Forwarded-Host cannot vouch for a foreign Host (the repro)', async (t) => {
  const { port } = await listening(t, { rest: { fastify: { trustProxy: true } } })
  for (const send of [openapi, echo]) {
    const refused = await send(port, { host: 'attacker.example', 'x-forwarded-host': 'localhost' })
    t.equal(refused.status, 403)
    t.same(refused.json, hostRefused)
    // Both loopback: served; a proxy naming a foreign host is refused too.
    t.equal((await send(port, { host: `127.0.0.1:${port}`, 'x-forwarded-host': 'localhost' })).status, 200)
    t.equal((await send(port, { host: `127.0.0.1:${port}`, 'x-forwarded-host': 'attacker.example' })).status, 403)
  }
})

t.test('trustProxy names other addresses: from this peer X-Forwarded-Host is ignored, the raw Host decides', async (t) => {
  const { port } = await listening(t, { rest: { fastify: { trustProxy: ['10.1.2.3'] } } })
  for (const send of [openapi, echo]) {
    const refused = await send(port, { host: 'attacker.example', 'x-forwarded-host': 'localhost' })
    t.equal(refused.status, 403)
    t.same(refused.json, hostRefused)
    t.equal((await send(port, { host: 'localhost', 'x-forwarded-host': 'attacker.example' })).status, 200, 'an untrusted forwarded Host changes nothing')
  }
})

t.test('a trusted proxy (trustProxy: its address): the forwarded Host is the one checked', async (t) => {
  const { port } = await listening(t, { rest: { fastify: { trustProxy: '127.0.0.1' }, allowedHosts: ['api.example.com'] } })
  // The proxy reaches the server by an internal name and forwards the public one.
  t.equal((await openapi(port, { host: 'backend.internal:8000', 'x-forwarded-host': 'api.example.com' })).status, 200)
  t.equal((await echo(port, { host: 'backend.internal:8000', 'x-forwarded-host': 'api.example.com' })).status, 200)
  const refused = await openapi(port, { host: 'api.example.com', 'x-forwarded-host': 'attacker.example' })
  t.equal(refused.status, 403)
  t.same(refused.json, hostRefused)
})

t.test('an absolute-form target: its authority is the Host the allowlist checks (RFC 9112 §3.2.2)', async (t) => {
  const { port } = await listening(t)
  const refused = await rawLines(port, ['GET http://attacker.example/api/openapi.json HTTP/1.1', 'host: localhost'])
  t.equal(refused.status, 403)
  t.same(JSON.parse(refused.body), hostRefused)
  const refusedPost = await rawLines(port, ['POST http://attacker.example:80/api/services/tasks/echo HTTP/1.1', 'host: 127.0.0.1', 'content-type: application/json'], echoBody)
  t.equal(refusedPost.status, 403)
  t.equal((await rawLines(port, [`GET http://localhost:${port}/api/openapi.json HTTP/1.1`, 'host: attacker.example'])).status, 200)
  t.equal((await rawLines(port, [`GET http://user@127.0.0.1/api/openapi.json HTTP/1.1`, 'host: localhost'])).status, 200, 'userinfo is not the host')
})

t.test('two Host headers: 400 envelope, also where no allowlist applies', async (t) => {
  for (const host of ['127.0.0.1', '0.0.0.0']) {
    const server = await buildServer({ services: [echoService], rest: { openapi: { enabled: true, reference: false } } })
    t.teardown(() => server.close())
    await server.app.listen({ port: 0, host })
    const port = (server.app.server.address() as AddressInfo).port
    for (const lines of [
      ['GET /api/openapi.json HTTP/1.1', 'host: localhost', 'host: attacker.example'],
      ['POST /api/services/tasks/echo HTTP/1.1', 'Host: localhost', 'HOST: localhost', 'content-type: application/json'],
    ]) {
      const answer = await rawLines(port, lines, lines[0]!.startsWith('POST') ? echoBody : '')
      t.equal(answer.status, 400, `${host}: ${lines.join(' | ')}`)
      t.same(JSON.parse(answer.body), { status: false, message: messages.badRequest, data: {} })
    }
    t.equal((await rawLines(port, ['GET /api/openapi.json HTTP/1.1', 'host: localhost'])).status, 200)
  }
})

// Loopback is 127.0.0.0/8: 127.0.0.2 and 127.0.0.3 are two clients with their own addresses.
const ping = createAction({ name: 'ping', description: 'Pong', handler: () => Ok({ pong: true }) })
const pingService: Service = { name: 'svc', description: 'Ping', actions: [ping] }
const call = (port: number, localAddress: string, headers: Record<string, string> = {}) =>
  rawRequest(port, { method: 'POST', path: '/api/services/svc/ping', headers: { ...json, ...headers }, body: '{}', localAddress })

t.test('client key over a socket: rotating X-Forwarded-For from an untrusted peer buys no fresh budget', async (t) => {
  const { port } = await listening(t, { services: [pingService], rest: { rateLimiting: { limitingHeader: 'x-api-key', limit: 2, windowMs: 60_000 } } })
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) statuses.push((await call(port, '127.0.0.2', { 'x-forwarded-for': `203.0.113.${i}`, 'x-real-ip': `198.51.100.${i}` })).status)
  t.same(statuses, [200, 200, 429, 429, 429, 429])
  const limited = await call(port, '127.0.0.2')
  t.equal(limited.status, 429)
  t.match(limited.json.message, /^Rate limit exceeded, retry in \d+ seconds$/)
  // Another address has its own budget: header-less clients no longer share `unknown-client`.
  t.same([(await call(port, '127.0.0.3')).status, (await call(port, '127.0.0.3')).status, (await call(port, '127.0.0.3')).status], [200, 200, 429])
})

t.test('client key behind a trusted proxy: each forwarded client has its own budget', async (t) => {
  const { port } = await listening(t, { services: [pingService], rest: { fastify: { trustProxy: '127.0.0.4' }, rateLimiting: { limitingHeader: 'x-api-key', limit: 1, windowMs: 60_000 } } })
  t.equal((await call(port, '127.0.0.4', { 'x-forwarded-for': '203.0.113.1' })).status, 200)
  t.equal((await call(port, '127.0.0.4', { 'x-forwarded-for': '203.0.113.1' })).status, 429)
  t.equal((await call(port, '127.0.0.4', { 'x-forwarded-for': '203.0.113.2' })).status, 200, 'another client behind the proxy')
  // A peer that is not the proxy: its own address, whatever it forwards.
  t.equal((await call(port, '127.0.0.5', { 'x-forwarded-for': '203.0.113.3' })).status, 200)
  t.equal((await call(port, '127.0.0.5', { 'x-forwarded-for': '203.0.113.9' })).status, 429)
})
