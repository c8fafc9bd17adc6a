import t from 'tap'
import { connect } from 'node:net'
import { messages } from '../lib/index.js'
import { buildServer } from './helpers/server.js'

/** Sends the headers, then one body byte every `everyMs`, and collects whatever the server answers. */
function trickle(port: number, everyMs: number, maxMs: number): Promise<{ answer: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    let timer: NodeJS.Timeout | undefined
    const give_up = setTimeout(() => socket.destroy(), maxMs)
    socket.on('connect', () => {
      socket.write('POST /api/services HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{')
      timer = setInterval(() => socket.writable && socket.write(' '), everyMs)
    })
    socket.on('data', (chunk) => (answer += chunk))
    socket.on('error', () => {})
    socket.on('close', () => {
      clearInterval(timer)
      clearTimeout(give_up)
      resolve({ answer, closedAfterMs: Date.now() - started })
    })
    socket.on('timeout', reject)
  })
}

t.test('a client that trickles its body is cut off with a 408 envelope', async (t) => {
  const server = await buildServer({ rest: { requestTimeout: 1000 } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = server.app.server.address() as { port: number }
  const { answer } = await trickle(port, 100, 15_000)
  t.match(answer, /^HTTP\/1\.1 408 /)
  t.ok(answer.endsWith(JSON.stringify({ status: false, message: messages.requestTimeout, data: {} })), answer)
})

t.test('the request timeout defaults to 30 s', async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  t.equal(server.app.server.requestTimeout, 30_000)
  t.ok(server.app.server.headersTimeout <= 30_000, 'headers deadline never longer than the request deadline')
})
