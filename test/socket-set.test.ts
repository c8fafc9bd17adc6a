import t from 'tap'
import { connect, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { trackedSocketCount } from '../lib/server/create-server.js'
import { buildServer } from './helpers/server.js'

/*
 * createServer tracks its connections (to close the silent ones on shutdown). A closed connection
 * leaves that set when it closes (at the next sweep, within a second), not when the set has doubled:
 * 20 connections, far fewer than the old sweep threshold, over real sockets.
 */

const BODY = JSON.stringify({ intent: 'execute', service: 'tasks', action: 'list', payload: {} })
const REQUEST = `POST /api/services HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`

/** A keep-alive connection that made one request and got its answer (or, silent, made none). */
async function open(port: number, silent: boolean): Promise<Socket> {
  const socket = connect(port, '127.0.0.1')
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  if (silent) return socket
  socket.write(REQUEST)
  await new Promise<void>((resolve) => {
    let text = ''
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString()
      if (text.includes('"status":true')) resolve()
    })
  })
  return socket
}

/** Polls until `check` holds (a generous deadline: the sweep runs once a second). */
async function until(check: () => boolean, ms = 15_000): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (check()) return true
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return check()
}

t.test('closed sockets leave the set after their clients disconnect', async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = server.app.server.address() as AddressInfo

  const sockets: Socket[] = []
  for (let index = 0; index < 20; index++) sockets.push(await open(port, index % 4 === 0))
  t.ok(await until(() => trackedSocketCount(server.app) === 20), 'the 20 open connections are tracked')

  // Half go away: the set shrinks to the 10 still open.
  for (const socket of sockets.splice(0, 10)) socket.destroy()
  t.ok(await until(() => trackedSocketCount(server.app) === 10), `10 left after 10 disconnected (holds ${trackedSocketCount(server.app)})`)

  // The rest too, with no new connection to trigger anything: the set is empty.
  for (const socket of sockets.splice(0)) socket.end()
  t.ok(await until(() => trackedSocketCount(server.app) === 0), `empty after every client left (holds ${trackedSocketCount(server.app)})`)

  // And it keeps working: a new connection is tracked, served, and shutdown still closes a silent one.
  const silent = await open(port, true)
  const served = await open(port, false)
  t.ok(await until(() => trackedSocketCount(server.app) === 2), 'new connections are tracked again')
  const closed = new Promise<void>((resolve) => silent.once('close', () => resolve()))
  served.destroy()
  await server.close()
  await closed
  t.equal(trackedSocketCount(server.app), 0, 'nothing tracked after close()')
})
