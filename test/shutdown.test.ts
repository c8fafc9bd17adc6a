import t from 'tap'
import { createAction, messages, Ok } from '../lib/index.js'
import { buildServer } from './helpers/server.js'
import { canConnect } from './helpers/net.js'


t.test('close() finishes in-flight requests and refuses new connections', async (t) => {
  let entered!: () => void
  const inHandler = new Promise<void>((resolve) => (entered = resolve))
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  const slow = createAction({
    name: 'slow',
    description: 'Waits until the test releases it',
    handler: async () => {
      entered()
      await released
      return Ok({ finished: true })
    },
  })
  const server = await buildServer({ services: [{ name: 's', description: '', actions: [slow] }] })
  const address = await server.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = server.app.server.address() as { port: number }

  const inFlight = fetch(`${address}/api/services`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ intent: 'execute', service: 's', action: 'slow', payload: {} }),
  })
  await inHandler
  const closing = server.close()
  let refused = false
  for (let attempt = 0; attempt < 50 && !refused; attempt++) {
    refused = !(await canConnect(port))
    if (!refused) await new Promise((resolve) => setTimeout(resolve, 20))
  }
  t.ok(refused, 'new connections are refused once close() has begun')
  release()
  const response = await inFlight
  t.equal(response.status, 200)
  t.same(await response.json(), { status: true, message: messages.executed('s', 'slow'), data: { finished: true } })
  await closing
  t.equal(server.app.server.listening, false)
})

t.test('a connection that never sent a byte does not hold close(); a request in flight on another still finishes', async (t) => {
  const { connect } = await import('node:net')
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let entered!: () => void
  const inHandler = new Promise<void>((resolve) => (entered = resolve))
  const slow = createAction({ name: 'slow', description: '', handler: async () => (entered(), await released, Ok({ finished: true })) })
  const server = await buildServer({ services: [{ name: 's', description: '', actions: [slow] }] })
  const address = await server.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = server.app.server.address() as { port: number }
  const silent = connect(port, '127.0.0.1')
  silent.on('error', () => {})
  await new Promise((resolve) => silent.once('connect', resolve))
  const silentClosed = new Promise((resolve) => silent.once('close', resolve))
  t.teardown(() => silent.destroy())

  const inFlight = fetch(`${address}/api/services`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ intent: 'execute', service: 's', action: 'slow', payload: {} }),
  })
  await inHandler
  const closing = server.close()
  await silentClosed
  t.pass('the silent connection was closed by the server')
  release()
  t.equal((await inFlight).status, 200, 'the in-flight request finished')
  await closing
  t.equal(server.app.server.listening, false)
})

/** The server side's listeners on one accepted connection, by event. */
async function connectionListeners(server: import('node:http').Server, port: number): Promise<Record<string, number>> {
  const { connect } = await import('node:net')
  const accepted = new Promise<Record<string, number>>((resolve) => {
    // Registered after the app's own 'connection' listeners, so it sees what they added.
    server.once('connection', (socket) => resolve(Object.fromEntries(socket.eventNames().map((name) => [String(name), socket.listenerCount(name)]))))
  })
  const client = connect(port, '127.0.0.1')
  client.on('error', () => {})
  const listeners = await accepted
  client.destroy()
  return listeners
}

t.test('a connection gets no listener of its own: the same listeners as under bare Fastify', async (t) => {
  const { default: Fastify } = await import('fastify')
  const bare = Fastify()
  await bare.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => bare.close())
  const server = await buildServer({ services: [{ name: 's', description: '', actions: [] }] })
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => server.close())
  const expected = await connectionListeners(bare.server, (bare.server.address() as { port: number }).port)
  const actual = await connectionListeners(server.app.server, (server.app.server.address() as { port: number }).port)
  t.ok(expected.close >= 1, 'Node listens for close itself')
  t.same(actual, expected)
})

t.test('closed connections are not kept for close(): they are collected, and a silent one is still closed', async (t) => {
  const { connect } = await import('node:net')
  const { setFlagsFromString } = await import('node:v8')
  const { runInNewContext } = await import('node:vm')
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  const server = await buildServer({ services: [{ name: 's', description: '', actions: [] }] })
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = server.app.server.address() as { port: number }
  const accepted: WeakRef<import('node:net').Socket>[] = []
  server.app.server.on('connection', (socket) => accepted.push(new WeakRef(socket)))
  const count = 300
  for (let i = 0; i < count; i++) {
    const client = connect(port, '127.0.0.1')
    client.on('error', () => {})
    await new Promise((resolve) => client.once('connect', resolve))
    client.destroy()
    await new Promise((resolve) => client.once('close', resolve))
  }
  for (let attempt = 0; attempt < 100 && accepted.some((ref) => ref.deref()?.destroyed === false); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  t.equal(accepted.length, count)
  // The set drops closed sockets on its sweep, once a second while it holds any: poll (with GC) until
  // every closed connection is collected, for up to 10 s, so nothing here depends on the machine's speed.
  let collected = 0
  for (let attempt = 0; attempt < 100 && collected < count; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    gc()
    collected = accepted.filter((ref) => ref.deref() === undefined).length
  }
  t.equal(collected, count, `${collected} of ${count} closed connections were collected`)

  const silent = connect(port, '127.0.0.1')
  silent.on('error', () => {})
  await new Promise((resolve) => silent.once('connect', resolve))
  const silentClosed = new Promise((resolve) => silent.once('close', resolve))
  t.teardown(() => silent.destroy())
  const closing = server.close()
  await silentClosed
  t.pass('the silent connection was closed by the server')
  await closing
  t.equal(server.app.server.listening, false)
})
