import t from 'tap'
import { connect, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import Fastify from 'fastify'
import { createAction, fastifyActions, getActions, messages, Ok, type Service } from '../../lib/index.js'
import { rawTarget as rawRequest } from '../helpers/raw-target.js'
import { buildServer } from '../helpers/server.js'
import { uploadPayload } from '../helpers/uploads.js'

// Per-action routes under attack, over real sockets: a body-less POST (sendBeacon, a no-cors fetch),
// names that would be router patterns, and anonymous uploads to a protected action.

const MB = 1024 * 1024
const secret = 'a-secret-of-at-least-thirty-two-characters'
let runs = 0
const ping = createAction({ name: 'ping', description: 'Ping', handler: () => Ok((runs++, 'pong')) })
const avatar = createAction({ name: 'avatar', description: 'Protected upload', isProtected: true, isSpecial: { contentType: 'multipart/form-data' }, validation: uploadPayload, handler: () => Ok({ stored: true }) })
const note = createAction({ name: 'note', description: 'Protected JSON', isProtected: true, handler: (data) => Ok({ got: Object.keys(data as object).length }) })
const upload = createAction({ name: 'upload', description: 'An upload', isSpecial: { contentType: 'multipart/form-data' }, validation: uploadPayload, handler: () => Ok((runs++, { stored: true })) })
const svc: Service = { name: 'svc', description: 'Service', actions: [ping, avatar, note, upload] }

t.test('a body-less POST or a JSON null never runs the action', async (t) => {
  const server = await buildServer({ services: [svc], rest: { openapi: { actionRoutes: true }, uploads: { enforceContentType: true } } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (server.app.server.address() as AddressInfo).port
  const refused = { status: false, message: messages.invalidBody, data: {} }
  for (const [name, headers, body] of [
    ['no body, no content type (sendBeacon, no-cors fetch)', {}, ''],
    ['no body, a JSON content type', { 'content-type': 'application/json' }, ''],
    ['JSON null', { 'content-type': 'application/json' }, 'null'],
  ] as const) {
    for (const action of ['ping', 'upload']) {
      const answer = await rawRequest(port, 'POST', `/api/services/svc/${action}`, headers, body)
      t.equal(answer.status, 400, `${action}: ${name}`)
      t.same(JSON.parse(answer.body), refused)
    }
  }
  t.equal(runs, 0, 'nothing ran')
  const ok = await rawRequest(port, 'POST', '/api/services/svc/ping', { 'content-type': 'application/json' }, '{}')
  t.equal(ok.status, 200, 'the documented call of an action without input: {}')
})

t.test('names outside [A-Za-z0-9_-] are refused at boot, naming the action', async (t) => {
  const named = (name: string) => createAction({ name, description: 'x', handler: () => Ok(1) })
  for (const name of ['star*', '*', ':id', 'a/b', 'a b', '', 'a.b', 'é', 'x'.repeat(65)]) {
    await t.rejects(buildServer({ services: [{ name: 'svc', description: 'x', actions: [named(name)] }] }), { code: 'FA_ERR_CONFIG', message: messages.invalidActionName(name, 'svc') }, `action ${JSON.stringify(name)}`)
  }
  await t.rejects(buildServer({ services: [{ name: 'my svc', description: 'x', actions: [ping] }] }), { code: 'FA_ERR_CONFIG', message: messages.invalidServiceName('my svc') })
  const app = Fastify()
  t.teardown(() => app.close())
  await t.rejects(
    async () => {
      await app.register(fastifyActions, { serverName: 'p', services: [{ name: 'svc', description: 'x', actions: [named('star*')] }] })
    },
    { code: 'FA_ERR_CONFIG', message: messages.invalidActionName('star*', 'svc') },
    'the plugin rejects register',
  )
  const fine = await buildServer({ services: [{ name: 'my-svc_2', description: 'x', actions: [named('Do-it_now'), named('x'.repeat(64))] }], rest: { openapi: { actionRoutes: true } } })
  t.teardown(() => fine.close())
  const answer = await fine.app.inject({ method: 'POST', url: '/api/services/my-svc_2/Do-it_now', payload: {} })
  t.equal(answer.statusCode, 200)
  const other = await fine.app.inject({ method: 'POST', url: '/api/services/my-svc_2/Do-it_nowANDMORE', payload: {} })
  t.equal(other.statusCode, 404)
})

/** Sends `size` bytes of body after `head` on one socket; resolves with the answer's status line once the server closed. */
function sendLarge(port: number, head: string, size: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')))
    socket.on('error', () => {})
    socket.on('close', () => resolve(answer))
    socket.write(head)
    const chunk = Buffer.alloc(64 * 1024, 0x61)
    let sent = 0
    const pump = () => {
      while (sent < size && !socket.destroyed) {
        sent += chunk.length
        if (!socket.write(chunk)) return void socket.once('drain', pump)
      }
    }
    pump()
  })
}

t.test('a protected route answers an anonymous upload 401 before reading its body', async (t) => {
  const server = await buildServer({
    services: [svc],
    auth: { secret },
    rest: { bodyLimit: 40 * MB, openapi: { actionRoutes: true }, uploads: { limits: { maxFileSize: 40 * MB, maxTotalSize: 40 * MB } } },
  })
  t.teardown(() => server.close())
  const sockets: Socket[] = []
  server.app.server.on('connection', (socket: Socket) => sockets.push(socket))
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (server.app.server.address() as AddressInfo).port
  const size = 19 * MB
  const boundary = 'XyZ'
  const multipartHead = `--${boundary}\r\ncontent-disposition: form-data; name="doc"; filename="a.pdf"\r\ncontent-type: application/pdf\r\n\r\n`
  const cases = [
    { name: 'multipart', path: '/api/services/svc/avatar', type: `multipart/form-data; boundary=${boundary}`, prefix: multipartHead },
    { name: 'JSON', path: '/api/services/svc/note', type: 'application/json', prefix: '{"x":"' },
  ]
  for (const c of cases) {
    sockets.length = 0
    const head = `POST ${c.path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: ${c.type}\r\ncontent-length: ${size + c.prefix.length}\r\n\r\n${c.prefix}`
    const answer = await sendLarge(port, head, size)
    t.match(answer, /^HTTP\/1\.1 401 /, `${c.name}: 401`)
    t.ok(answer.includes(JSON.stringify({ status: false, message: messages.authFailed(messages.authReasons.missingToken), data: {} })), `${c.name}: the 401 envelope`)
    const read = sockets.reduce((sum, socket) => sum + socket.bytesRead, 0)
    t.comment(`${c.name}: the server read ${(read / MB).toFixed(1)} MB of ${size / MB} MB`)
    t.ok(read < 8 * MB, `${c.name}: the body was not read (${(read / MB).toFixed(1)} MB read)`)
  }
  // With a token the same route reads its body and runs.
  const token = getActions(server.app).jwt!.sign({ sub: 'u1' })
  const form = new FormData()
  form.append('doc', new File(['%PDF-1.4 x'], 'a.pdf', { type: 'application/pdf' }))
  const url = `http://127.0.0.1:${port}/api/services/svc/avatar`
  const ok = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form })
  t.equal(ok.status, 200)
  t.same(await ok.json(), { status: true, message: messages.executed('svc', 'avatar'), data: { stored: true } })
})
