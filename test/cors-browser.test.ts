import t, { type Test } from 'tap'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { createAction, messages } from '../lib/index.js'
import { paymentService } from './helpers/idempotency.js'
import { buildServer } from './helpers/server.js'
import { chromiumSkipReason, dumpDom, readResult, resultPage, servePage } from './helpers/chromium.js'

/** What a page reports for one fetch: the status and envelope it could read, or the error it got. */
const fetchAndReport = `
async function report(url, init) {
  try {
    const response = await fetch(url, init)
    return { status: response.status, body: await response.json() }
  } catch (error) {
    return { error: error.name }
  }
}
const execute = (api, init = {}) => report(api + '/api/services', {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ intent: 'execute', service: 'tasks', action: 'list', payload: {} }),
  ...init,
})`

const executedList = { status: 200, body: { status: true, message: messages.executed('tasks', 'list'), data: { result: [1, 2, 3] } } }

/** A listening API on a free loopback port with `/login` (sets a cookie) and `/whoami` (echoes it). */
async function startApi(t: Test, allowedOrigins: string[], hits: string[]): Promise<string> {
  const server = await buildServer({ rest: { allowedOrigins } })
  t.teardown(() => server.close())
  const app: FastifyInstance = server.app
  // onResponse sees every answer, the preflights the CORS hook answers early included.
  app.addHook('onResponse', async (request) => {
    hits.push(`${request.method} ${request.url}`)
  })
  app.get('/login', async (_request, reply) => {
    reply.header('set-cookie', 'sid=browser-session; Path=/; HttpOnly; SameSite=Lax')
    return { status: true, message: 'logged in', data: {} }
  })
  app.get('/whoami', async (request) => ({ status: true, message: 'who', data: { cookie: request.headers.cookie ?? null } }))
  await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

t.test('a real browser honours the CORS answers', { skip: chromiumSkipReason() }, async (t) => {
  let api = ''
  let openApi = ''
  const allowedPage = await servePage(() =>
    resultPage(`${fetchAndReport}
      const api = ${JSON.stringify(api)}
      const allowed = await execute(api)
      const login = await report(api + '/login', { credentials: 'include' })
      const credentialed = await report(api + '/whoami', { credentials: 'include' })
      const wildcard = await execute(${JSON.stringify(openApi)})
      const wildcardCredentialed = await execute(${JSON.stringify(openApi)}, { credentials: 'include' })
      return { allowed, login, credentialed, wildcard, wildcardCredentialed }`),
  )
  t.teardown(() => allowedPage.close())
  const refusedPage = await servePage(() =>
    resultPage(`${fetchAndReport}
      const api = ${JSON.stringify(api)}
      const preflighted = await execute(api)
      const simple = await report(api + '/whoami')
      return { preflighted, simple }`),
  )
  t.teardown(() => refusedPage.close())

  const hits: string[] = []
  api = await startApi(t, [allowedPage.origin], hits)
  openApi = await startApi(t, [], [])

  t.test('an allowed origin reads the answer; credentials flow both ways', async (t) => {
    const result = readResult(await dumpDom(`${allowedPage.origin}/`))
    t.strictSame(result, {
      allowed: executedList,
      login: { status: 200, body: { status: true, message: 'logged in', data: {} } },
      credentialed: { status: 200, body: { status: true, message: 'who', data: { cookie: 'sid=browser-session' } } },
      wildcard: executedList,
      // `*` with credentials is refused by the browser itself (documented in docs/cors.md).
      wildcardCredentialed: { error: 'TypeError' },
    })
    t.ok(hits.includes('OPTIONS /api/services'), 'the JSON POST was preflighted')
    t.ok(hits.includes('POST /api/services'), 'then sent')
  })

  t.test('a refused origin is blocked by the browser: the page sees a TypeError', async (t) => {
    hits.length = 0
    const result = readResult(await dumpDom(`${refusedPage.origin}/`))
    t.strictSame(result, { preflighted: { error: 'TypeError' }, simple: { error: 'TypeError' } })
    t.strictSame(hits, ['OPTIONS /api/services', 'GET /whoami'], 'the preflight stopped the POST; the simple GET reached the server but its answer was hidden')
  })
})

t.test('a real browser may resume a stream and read a replayed answer cross-origin (the default headers)', { skip: chromiumSkipReason() }, async (t) => {
  let api = ''
  const page = await servePage(() =>
    resultPage(`
      const api = ${JSON.stringify(api)}
      const post = async (body, headers) => {
        try {
          const response = await fetch(api + '/api/services', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
          return { status: response.status, replayed: response.headers.get('idempotent-replayed'), text: await response.text() }
        } catch (error) {
          return { error: error.name }
        }
      }
      const feed = { intent: 'execute', service: 'feeds', action: 'feed', payload: {} }
      const resumed = await post(feed, { accept: 'text/event-stream', 'last-event-id': '1' })
      const charge = { intent: 'execute', service: 'pay', action: 'charge', payload: { amount: 5 } }
      const first = await post(charge, { 'idempotency-key': 'k-browser' })
      const again = await post(charge, { 'idempotency-key': 'k-browser' })
      return { resumed, first, again }`),
  )
  t.teardown(() => page.close())
  const feed = createAction({
    name: 'feed',
    description: 'Streams two events',
    handler: async function* () {
      yield { n: 1 }
      yield { n: 2 }
    },
  })
  const runs: Record<string, number> = {}
  const server = await buildServer({ services: [paymentService({ runs }), { name: 'feeds', description: 'Feeds', actions: [feed] }], rest: { allowedOrigins: [page.origin] } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  api = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`

  const charged = JSON.stringify({ status: true, message: messages.executed('pay', 'charge'), data: { id: 'ch_1', amount: 5 } })
  t.strictSame(readResult(await dumpDom(`${page.origin}/`)), {
    // Without Last-Event-ID in the allowed headers the preflight fails (a TypeError) and a standard client retries for ever.
    resumed: { status: 204, replayed: null, text: '' },
    first: { status: 200, replayed: null, text: charged },
    // Without Idempotent-Replayed in the exposed headers the page reads null.
    again: { status: 200, replayed: 'true', text: charged },
  })
  t.equal(runs.charge, 1, 'the charge ran once')
})
