import t from 'tap'
import { DEFAULTS, messages } from '../lib/index.js'
import { buildServer, execute } from './helpers/server.js'

// Load shedding: under event-loop pressure the server answers 503 envelopes with Retry-After,
// then recovers. The loop is driven into pressure by blocking it from a timer; the thresholds are
// generous and every wait polls, bounded, so a loaded machine only makes it slower.

const overloaded = { status: false, message: messages.underPressure, data: {} }
const BLOCK_MS = 250
const WAIT_MS = 20_000

function block(ms: number) {
  const end = Date.now() + ms
  while (Date.now() < end) {
    // busy: nothing else runs on this loop
  }
}

/** Repeats `probe` until it returns true or WAIT_MS pass; the tries it took. */
async function until(probe: () => Promise<boolean>): Promise<number> {
  const deadline = Date.now() + WAIT_MS
  for (let tries = 1; ; tries++) {
    if (await probe()) return tries
    if (Date.now() > deadline) throw new Error(`not within ${WAIT_MS} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

t.test('off by default: no shedding, /status as the specification says', async (t) => {
  t.same(DEFAULTS.underPressure, { maxEventLoopDelay: 1000, maxEventLoopUtilization: 0.98, maxHeapUsedBytes: 0, maxRssBytes: 0, retryAfter: 10, sampleInterval: 1000 })
  const server = await buildServer({ rest: { enableStatus: true } })
  t.teardown(() => server.close())
  const status = await server.app.inject({ method: 'GET', url: '/status' })
  t.same(status.json(), { status: true, message: messages.running('test-server'), data: {} })
  t.equal(server.app.hasDecorator('isUnderPressure'), false)
})

t.test('a blocked event loop answers 503 with Retry-After, /status reports it, then recovery', async (t) => {
  const server = await buildServer({
    rest: { enableStatus: true, underPressure: { maxEventLoopDelay: 100, maxEventLoopUtilization: 0, sampleInterval: 50, retryAfter: 7 } },
  })
  t.teardown(() => server.close())
  const app = server.app
  const status = async () => (await app.inject({ method: 'GET', url: '/status' })).json()

  t.equal((await execute(app, 'tasks', 'list')).statusCode, 200)
  t.same(await status(), { status: true, message: messages.running('test-server'), data: { underPressure: false } })

  let stressing = true
  const stress = setInterval(() => stressing && block(BLOCK_MS), 10)
  t.teardown(() => clearInterval(stress))

  let shed: Awaited<ReturnType<typeof execute>> | undefined
  await until(async () => {
    const answer = await execute(app, 'tasks', 'list')
    if (answer.statusCode === 503) shed = answer
    return shed !== undefined
  })
  t.equal(shed?.statusCode, 503)
  t.same(shed?.body, overloaded)
  t.equal(shed?.headers['retry-after'], '7')
  // Custom routes and the 404 are shed too (one root hook); /status is not: it reports the pressure.
  await until(async () => (await app.inject({ method: 'GET', url: '/nowhere' })).statusCode === 503)
  await until(async () => {
    const answer = await app.inject({ method: 'GET', url: '/status' })
    return answer.statusCode === 200 && answer.json().data.underPressure === true
  })

  stressing = false
  clearInterval(stress)
  await until(async () => (await execute(app, 'tasks', 'list')).statusCode === 200)
  await until(async () => (await status()).data.underPressure === false)
  t.same(await status(), { status: true, message: messages.running('test-server'), data: { underPressure: false } })
})

t.test('underPressure: true takes the documented defaults; bad thresholds are config errors', async (t) => {
  const server = await buildServer({ rest: { underPressure: true } })
  t.teardown(() => server.close())
  t.equal(server.app.isUnderPressure(), false)
  await t.rejects(buildServer({ rest: { underPressure: { maxEventLoopUtilization: 2 } } }), { code: 'FA_ERR_CONFIG', message: /rest\.underPressure\.maxEventLoopUtilization/ })
  await t.rejects(buildServer({ rest: { underPressure: 'yes' as never } }), { code: 'FA_ERR_CONFIG', message: /rest\.underPressure/ })
})
