import t from 'tap'
import { connect } from 'node:net'
import type { AddressInfo } from 'node:net'
import { createAction, messages, Ok, type Service } from '../lib/index.js'
import { buildServer } from './helpers/server.js'
import { echoService } from './helpers/fixtures.js'
import { BOUNDARY, filesService } from './helpers/uploads.js'

// `Expect: 100-continue` over a real socket (inject has no interim answers): a declared body over the
// limit is refused with its 413 alone, never invited with `100 Continue` first; others are invited.

interface Exchange {
  /** Every status line the server sent, interim ones included, in order. */
  statuses: number[]
  body: string
}

/**
 * Sends the head with `Expect: 100-continue`, then the body only when invited (as curl does), and
 * reads to the close. A server that neither invites nor answers fails the test at the deadline.
 */
function expectContinue(port: number, target: string, headers: Record<string, string>, body: Buffer): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const lines = [`POST ${target} HTTP/1.1`, 'host: 127.0.0.1', 'expect: 100-continue', `content-length: ${headers['content-length'] ?? body.length}`]
    for (const [name, value] of Object.entries(headers)) if (name !== 'content-length') lines.push(`${name}: ${value}`)
    let received = ''
    let sent = false
    const deadline = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no answer within 10 s; got ${JSON.stringify(received)}`))
    }, 10_000)
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1')
      if (!sent && received.startsWith('HTTP/1.1 100 ')) {
        sent = true
        socket.write(body)
      }
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      clearTimeout(deadline)
      const statuses = [...received.matchAll(/^HTTP\/1\.1 (\d{3}) /gm)].map((match) => Number(match[1]))
      resolve({ statuses, body: received.slice(received.lastIndexOf('\r\n\r\n') + 4) })
    })
    socket.write(`${lines.join('\r\n')}\r\n\r\n`)
    // The request is closed for writing once answered or sent: the server ends the connection.
    socket.setTimeout(5_000, () => socket.end())
  })
}

const guarded = createAction({ name: 'guarded', description: 'Needs a token', isProtected: true, handler: () => Ok('in') })
const guardedService: Service = { name: 'guarded', description: 'Protected', actions: [guarded] }
const json = { 'content-type': 'application/json', connection: 'close' }
const small = Buffer.from(JSON.stringify({ intent: 'execute', service: 'tasks', action: 'echo', payload: { title: 'a', count: 1 } }))

t.test('a declared body over the limit: 413 without 100 Continue; within it: 100 Continue, then the answer', async (t) => {
  const server = await buildServer({
    services: [echoService, filesService, guardedService],
    auth: { secret: 'expect-continue-secret-that-is-long-enough-to-pass' },
    rest: { bodyLimit: 1024, openapi: { enabled: true }, mcp: { enabled: true } },
  })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (server.app.server.address() as AddressInfo).port
  const over = Buffer.alloc(4096, 0x20)

  for (const target of ['/api/services', '/api/services/tasks/echo', '/api/mcp']) {
    const refused = await expectContinue(port, target, { ...json, accept: 'application/json, text/event-stream' }, over)
    t.same(refused.statuses, [413], `${target}: the 413 alone`)
    t.same(JSON.parse(refused.body), { status: false, message: messages.bodyTooLarge, data: {} })
  }

  const invited = await expectContinue(port, '/api/services', json, small)
  t.same(invited.statuses, [100, 200], 'a body within the limit is invited, then executed')
  t.equal(JSON.parse(invited.body).data.title, 'a')

  const anonymous = await expectContinue(port, '/api/services/guarded/guarded', json, Buffer.from('{}'))
  t.same(anonymous.statuses, [401], 'a protected route turns an anonymous caller away without inviting the body')

  const multipart = await expectContinue(
    port,
    '/api/services',
    { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': String(1024 * 1024 * 1024), connection: 'close' },
    Buffer.alloc(0),
  )
  t.same(multipart.statuses, [413], 'an upload declared over the multipart limit')
  t.same(JSON.parse(multipart.body), { status: false, message: messages.bodyTooLarge, data: {} })
})

t.test("a route of the host's own still gets 100 Continue when it reads the body", async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  server.app.post('/own', async (request) => ({ got: request.body }))
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (server.app.server.address() as AddressInfo).port
  const answer = await expectContinue(port, '/own', json, Buffer.from('{"a":1}'))
  t.same(answer.statuses, [100, 200])
  t.same(JSON.parse(answer.body), { got: { a: 1 } })
})
