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
