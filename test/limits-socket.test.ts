import t from 'tap'
import { maxHeaderSize } from 'node:http'
import { connect, type Socket } from 'node:net'
import { messages, type RestConfig } from '../lib/index.js'
import { DEFAULTS } from '../lib/index.js'
const { bodyLimit: DEFAULT_BODY_LIMIT, requestTimeout: DEFAULT_REQUEST_TIMEOUT } = DEFAULTS.rest
import { buildServer } from './helpers/server.js'

// What a client can hold or send is bounded, over a real socket: idle and slow connections, bodies,
// headers. Each bound answers with the envelope; none leaves a connection open.

/** A subtest's `t`. */
type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

interface RawAnswer {
  status: number
  headers: string
  body: unknown
}

/** Opens a socket, lets `talk` write to it, and parses whatever the server answers before it closes the socket. */
function rawExchange(port: number, talk: (socket: Socket) => void, maxMs = 20_000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => talk(socket))
    let data = ''
    const giveUp = setTimeout(() => socket.destroy(new Error(`no answer within ${maxMs}ms`)), maxMs)
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (data += chunk))
    socket.on('error', () => {}) // a reset after the answer is fine: the answer is what counts
    socket.on('close', () => {
      clearTimeout(giveUp)
      const split = data.indexOf('\r\n\r\n')
      const match = /^HTTP\/1\.1 (\d{3}) /.exec(data)
      if (split < 0 || !match) return reject(new Error(`not an HTTP answer: ${JSON.stringify(data.slice(0, 200))}`))
      try {
        resolve({ status: Number(match[1]), headers: data.slice(0, split), body: JSON.parse(data.slice(split + 4)) })
      } catch (error) {
        reject(error)
      }
    })
  })
}

async function listening(t: Tap, rest: Partial<RestConfig> = {}) {
  const server = await buildServer({ rest })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  return (server.app.server.address() as { port: number }).port
}

const echoBody = JSON.stringify({ intent: 'execute', service: 'tasks', action: 'echo', payload: { title: 'a', count: 1 } })
const echoed = { status: true, message: messages.executed('tasks', 'echo'), data: { title: 'a', count: 1 } }

t.test('the defaults: 1 MiB bodies, 16 KiB headers, 30 s to send a request', async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  t.equal(DEFAULT_BODY_LIMIT, 1024 * 1024)
  t.equal(server.app.initialConfig.bodyLimit, DEFAULT_BODY_LIMIT)
  t.equal(maxHeaderSize, 16 * 1024, "Node's header limit (--max-http-header-size) is left as it is")
  t.equal(DEFAULT_REQUEST_TIMEOUT, 30_000)
  t.equal(server.app.server.requestTimeout, DEFAULT_REQUEST_TIMEOUT)
})

t.test('a connection that never sends a request is closed with the 408 envelope', async (t) => {
  const port = await listening(t, { requestTimeout: 500 })
  const answer = await rawExchange(port, () => {})
  t.equal(answer.status, 408)
  t.match(answer.headers, /\r\nConnection: close/i)
  t.same(answer.body, { status: false, message: messages.requestTimeout, data: {} })
})

t.test('a client that trickles its headers (slowloris) is cut off with the 408 envelope', async (t) => {
  const port = await listening(t, { requestTimeout: 500 })
  let timer: NodeJS.Timeout | undefined
  t.teardown(() => clearInterval(timer))
  const answer = await rawExchange(port, (socket) => {
    socket.write('POST /api/services HTTP/1.1\r\nHost: localhost\r\n')
    let n = 0
    timer = setInterval(() => socket.writable && socket.write(`X-Header-${n++}: still coming\r\n`), 50)
    socket.on('close', () => clearInterval(timer))
  })
  t.equal(answer.status, 408)
  t.same(answer.body, { status: false, message: messages.requestTimeout, data: {} })
})

t.test('a declared body over the limit is refused with the 413 envelope before it is sent', async (t) => {
  const port = await listening(t)
  // Only the headers and one byte go out: the answer cannot wait for the 100 MiB.
  const answer = await rawExchange(port, (socket) => {
    socket.write(`POST /api/services HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n{`)
  })
  t.equal(answer.status, 413)
  t.match(answer.headers, /\r\nconnection: close/i)
  t.same(answer.body, { status: false, message: messages.bodyTooLarge, data: {} })
})

t.test('a chunked body that grows past the limit is cut off with the 413 envelope', async (t) => {
  const port = await listening(t, { bodyLimit: 64 * 1024 })
  const chunk = 'x'.repeat(16 * 1024)
  const most = 4096 // 64 MiB, far more than the socket buffers hold
  let sent = 0
  const answer = await rawExchange(port, (socket) => {
    let answered = false
    socket.once('data', () => {
      answered = true
      socket.end()
    })
    socket.write('POST /api/services HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n')
    const send = () => {
      if (answered || !socket.writable || sent >= most) return
      sent++
      socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`, send)
    }
    send()
  })
  t.equal(answer.status, 413)
  t.same(answer.body, { status: false, message: messages.bodyTooLarge, data: {} })
  t.ok(sent < most, `answered after ${sent} of ${most} chunks`)
})

t.test("headers: a request within Node's 16 KiB is served, one beyond it is the 431 envelope", async (t) => {
  const port = await listening(t)
  const request = (filler: number) =>
    rawExchange(port, (socket) =>
      socket.end(
        `POST /api/services HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(echoBody)}\r\nX-Filler: ${'a'.repeat(filler)}\r\n\r\n${echoBody}`,
      ),
    )
  const within = await request(15 * 1024)
  t.equal(within.status, 200)
  t.same(within.body, echoed)
  const beyond = await request(16 * 1024)
  t.equal(beyond.status, 431)
  t.same(beyond.body, { status: false, message: messages.headersTooLarge, data: {} })
})
