import t from 'tap'
import { Agent, request } from 'node:http'
import { createAction, Ok, messages, type BeforeActionHandler, type RestRequestContext, type Service } from '../lib/index.js'
import { buildServer } from './helpers/server.js'

// Isolation under load: 1,200 overlapping requests from 120 JWT users through a real socket. Every
// await in the global handler, the before hook and the handler is a chance for another request's
// state to leak in; each answer must carry only its own user, session, hook state and header.
const USERS = 120
const PER_USER = 10
const TOTAL = USERS * PER_USER
/** The first BARRIER executions wait in their before hook until that many are inside at once. */
const BARRIER = 100
const SECRET = 'isolation-test-secret-long-enough-for-hs256'

/** Deterministic jitter (mulberry32) so the interleaving differs per request but not per run. */
function jitter(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let x = Math.imul(state ^ (state >>> 15), 1 | state)
    x ^= x + Math.imul(x ^ (x >>> 7), 61 | x)
    return ((x ^ (x >>> 14)) >>> 0) % 4
  }
}
const next = jitter(7)
/** Yields to the event loop: 0 to 3 ms, or one setImmediate. */
const pause = () => {
  const ms = next()
  return new Promise<void>((resolve) => (ms === 0 ? setImmediate(resolve) : setTimeout(resolve, ms)))
}

function isolationService() {
  let inside = 0
  let maxInside = 0
  let waiting = 0
  let release!: () => void
  const barrier = new Promise<void>((resolve) => (release = resolve))

  /** Before hook: writes the hook state and the session from the identity, then waits for the others. */
  const remember = createAction({
    name: 'remember',
    description: 'Writes hook state and a session',
    visibility: { rest: false },
    handler: async (data: Record<string, unknown>, context) => {
      await pause()
      const userId = context.getUser()?.userId
      const requestId = context.get<RestRequestContext>('rest')?.req.headers['x-request-id']
      context.updateHookState('hook', `${userId}/${requestId}`)
      context.setSession('rest', { userId, requestId })
      if (waiting < BARRIER) {
        waiting++
        if (waiting === BARRIER) release()
        await barrier
      }
      await pause()
      return Ok({ ...data, stampedBy: userId })
    },
  })

  const whoami = createAction({
    name: 'whoami',
    description: 'Echoes what this request sees',
    isProtected: true,
    hooks: { before: [{ service: 'iso', action: 'remember', isCritical: true }] },
    handler: async (data: Record<string, unknown>, context) => {
      inside++
      maxInside = Math.max(maxInside, inside)
      await pause()
      const userId = context.getUser()?.userId
      await pause()
      const session = context.getSession('rest')
      await pause()
      const header = context.get<RestRequestContext>('rest')?.req.headers['x-request-id']
      const hookState = { ...context.hookContext.state }
      inside--
      return Ok({ userId, session, hookState, header, payload: data })
    },
  })

  const service: Service = { name: 'iso', description: 'Isolation under load', actions: [remember, whoami] }
  return { service, stats: () => ({ waiting, maxInside }) }
}

/** The global before handler: its own await, then its own entry in the hook state. */
const onBeforeActionHandler: BeforeActionHandler = async ({ nileContext }) => {
  await pause()
  nileContext.updateHookState('gate', nileContext.getUser()?.userId)
  return Ok(null)
}

interface Answer {
  statusCode: number
  body: unknown
}

function post(agent: Agent, port: number, body: unknown, headers: Record<string, string>): Promise<Answer> {
  const payload = JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/services',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (text += chunk))
        res.on('end', () => {
          try {
            resolve({ statusCode: res.statusCode ?? 0, body: JSON.parse(text) })
          } catch (error) {
            reject(error)
          }
        })
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(payload)
  })
}

t.test(`${TOTAL} overlapping requests from ${USERS} JWT users each see only their own user, session, hook state and header`, async (t) => {
  const iso = isolationService()
  const server = await buildServer({ services: [iso.service], auth: { secret: SECRET }, onBeforeActionHandler })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = server.app.server.address() as { port: number }
  const agent = new Agent({ keepAlive: true, maxSockets: 128 })
  t.teardown(() => agent.destroy())

  const tokens = Array.from({ length: USERS }, (_, u) => server.app.jwt.sign({ sub: `user-${u}`, orgId: `org-${u % 7}` }))
  // Users interleaved: request i belongs to user i % USERS, so neighbours on the wire differ.
  const calls = Array.from({ length: TOTAL }, (_, i) => {
    const user = i % USERS
    const requestId = `req-${i}`
    return post(
      agent,
      port,
      { intent: 'execute', service: 'iso', action: 'whoami', payload: { n: i } },
      { authorization: `Bearer ${tokens[user]}`, 'x-request-id': requestId },
    )
  })
  const answers = await Promise.all(calls)

  const mismatches: Array<{ i: number; got: Answer }> = []
  answers.forEach((got, i) => {
    const userId = `user-${i % USERS}`
    const requestId = `req-${i}`
    const expected = {
      statusCode: 200,
      body: {
        status: true,
        message: messages.executed('iso', 'whoami'),
        data: {
          userId,
          session: { userId, requestId },
          hookState: { gate: userId, hook: `${userId}/${requestId}` },
          header: requestId,
          payload: { n: i, stampedBy: userId },
        },
      },
    }
    if (JSON.stringify(got) !== JSON.stringify(expected)) mismatches.push({ i, got })
  })
  t.same(mismatches.slice(0, 5), [], 'every answer carries only its own state')
  t.equal(mismatches.length, 0)
  t.equal(answers.length, TOTAL)
  const { waiting, maxInside } = iso.stats()
  t.equal(waiting, BARRIER, `${BARRIER} executions were inside their before hook at once`)
  t.ok(maxInside > 1, `handlers overlapped (at most ${maxInside} at once)`)
})
