import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { connect, type AddressInfo } from 'node:net'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { messages, type ExternalResponse, type ServiceLogger } from '../lib/index.js'
import { createDiagnostics } from '../lib/diagnostics.js'
import { installErrorEnvelope } from '../plugins/errors.js'
import { staticPlugin, type StaticAdapterLoader } from '../plugins/static.js'
import { buildServer } from './helpers/server.js'

const SECRET = 'TOPSECRET-outside-the-static-dir'
const notFound: ExternalResponse = { status: false, message: messages.routeNotFound('/api'), data: {} }

/** `<dir>/secret.txt` next to the static dir `<dir>/public`. */
function fixture(t: Test): string {
  return t.testdir({
    'secret.txt': SECRET,
    public: {
      'hello.txt': 'hello\n',
      'page.html': '<p>hi</p>',
      sub: { 'a.txt': 'nested\n' },
      docs: { 'index.html': '<h1>docs</h1>' },
      '.env': 'SECRET=1',
    },
  })
}

async function build(t: Test, rest: Record<string, unknown>, config: Record<string, unknown> = {}) {
  const server = await buildServer({ ...config, rest: { allowedOrigins: [], ...rest } })
  t.teardown(() => server.close())
  return server
}

interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

/** Sends a request line byte for byte over a socket: `inject` would normalise `..` and `%2e` first. */
function rawGet(port: number, target: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    socket.setTimeout(5000, () => socket.destroy(new Error(`no answer for ${target}`)))
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('latin1')
      const split = text.indexOf('\r\n\r\n')
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n')
      const headers: Record<string, string> = {}
      for (const line of lines) {
        const colon = line.indexOf(':')
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text.slice(split + 4) })
    })
    socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`)
  })
}

async function listen(t: Test, app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return (app.server.address() as AddressInfo).port
}

t.test('serves staticDir at /assets/*', async (t) => {
  const dir = fixture(t)
  t.chdir(dir)
  const { app } = await build(t, { enableStatic: true, staticDir: 'public' })

  t.test('a file', async (t) => {
    const response = await app.inject({ method: 'GET', url: '/assets/hello.txt' })
    t.equal(response.statusCode, 200)
    t.equal(response.body, 'hello\n')
    t.equal(response.headers['content-type'], 'text/plain; charset=utf-8')
    const html = await app.inject({ method: 'GET', url: '/assets/page.html' })
    t.equal(html.statusCode, 200)
    t.equal(html.headers['content-type'], 'text/html; charset=utf-8')
  })
  t.test('caching headers come from @fastify/send', async (t) => {
    const response = await app.inject({ method: 'GET', url: '/assets/hello.txt' })
    t.equal(response.headers['cache-control'], 'public, max-age=0')
    t.equal(response.headers['accept-ranges'], 'bytes')
    t.type(response.headers.etag, 'string')
    const again = await app.inject({ method: 'GET', url: '/assets/hello.txt', headers: { 'if-none-match': String(response.headers.etag) } })
    t.equal(again.statusCode, 304)
  })
  t.test('a directory serves its index.html', async (t) => {
    for (const url of ['/assets/docs/', '/assets/docs']) {
      const response = await app.inject({ method: 'GET', url })
      t.equal(response.statusCode, 200, url)
      t.equal(response.body, '<h1>docs</h1>', url)
    }
  })
  t.test('a nested file', async (t) => {
    const response = await app.inject({ method: 'GET', url: '/assets/sub/a.txt' })
    t.equal(response.statusCode, 200)
    t.equal(response.body, 'nested\n')
  })
  t.test('HEAD answers the headers only', async (t) => {
    const response = await app.inject({ method: 'HEAD', url: '/assets/hello.txt' })
    t.equal(response.statusCode, 200)
    t.equal(response.headers['content-length'], '6')
    t.equal(response.body, '')
  })
  t.test('a missing file, a directory and a dotfile answer the 404 envelope', async (t) => {
    for (const url of ['/assets/missing.txt', '/assets/sub/', '/assets/sub', '/assets/', '/assets/.env', '/assets/sub/missing/deeper.txt']) {
      const response = await app.inject({ method: 'GET', url })
      t.equal(response.statusCode, 404, url)
      t.strictSame(response.json(), notFound, url)
    }
  })
  t.test('a POST to /assets/* is the 404 envelope', async (t) => {
    const response = await app.inject({ method: 'POST', url: '/assets/hello.txt', payload: {} })
    t.equal(response.statusCode, 404)
    t.strictSame(response.json(), notFound)
  })
  t.test('the services endpoint still works', async (t) => {
    const response = await app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'execute', service: 'tasks', action: 'list', payload: {} } })
    t.equal(response.statusCode, 200)
    t.strictSame(response.json(), { status: true, message: messages.executed('tasks', 'list'), data: { result: [1, 2, 3] } })
  })
})

t.test('traversal never serves a file outside staticDir', async (t) => {
  const dir = fixture(t)
  t.chdir(dir)
  t.equal(readFileSync(join(dir, 'public', '..', 'secret.txt'), 'utf8'), SECRET, 'the secret sits next to the static dir')
  const { app } = await build(t, { enableStatic: true, staticDir: 'public' })
  const port = await listen(t, app)
  t.equal((await rawGet(port, '/assets/hello.txt')).body, 'hello\n', 'the raw client reaches a real file')

  const absolute = join(dir, 'secret.txt')
  const attempts: Record<string, string> = {
    'a plain ..': '/assets/../secret.txt',
    'a .. below a real directory': '/assets/sub/../../secret.txt',
    '%2e%2e': '/assets/%2e%2e/secret.txt',
    '%2E%2E upper case': '/assets/%2E%2E/secret.txt',
    'a mixed .%2e': '/assets/.%2e/secret.txt',
    '..%2f': '/assets/..%2fsecret.txt',
    '%2e%2e%2f': '/assets/%2e%2e%2fsecret.txt',
    'a double-encoded %252e%252e%252f': '/assets/%252e%252e%252fsecret.txt',
    '..%5c': '/assets/..%5csecret.txt',
    '%5c..%5c': '/assets/%5c..%5csecret.txt',
    'a raw backslash': '/assets/..\\secret.txt',
    'a double slash before an absolute path': `/assets/${absolute}`,
    'an encoded absolute path': `/assets/${encodeURIComponent(absolute)}`,
    'a double slash inside the path': '/assets/sub//../../secret.txt',
    'a null byte': '/assets/../secret.txt%00.txt',
    'a null byte after a real file': '/assets/hello.txt%00',
    'a file URL': `/assets/file://${absolute}`,
  }
  for (const [name, target] of Object.entries(attempts)) {
    const answer = await rawGet(port, target)
    t.notMatch(answer.body, SECRET, `${name}: the secret is not served`)
    t.equal(answer.status, 404, `${name}: 404`)
    t.strictSame(JSON.parse(answer.body), notFound, `${name}: the 404 envelope`)
  }

  t.test('non-canonical paths to real files are refused the same way', async (t) => {
    for (const target of ['/assets//hello.txt', '/assets/./hello.txt', '/assets/sub/../hello.txt', '//assets/hello.txt']) {
      const answer = await rawGet(port, target)
      t.equal(answer.status, 404, target)
      t.strictSame(JSON.parse(answer.body), notFound, target)
    }
  })
})

t.test('staticDir defaults to ./assets under process.cwd(), created at boot', async (t) => {
  const dir = t.testdir({})
  t.chdir(dir)
  await build(t, { enableStatic: true })
  t.ok(existsSync(join(dir, 'assets')), './assets was created')
  writeFileSync(join(dir, 'assets', 'late.txt'), 'added after boot')
  const { app } = await build(t, { enableStatic: true })
  const response = await app.inject({ method: 'GET', url: '/assets/late.txt' })
  t.equal(response.statusCode, 200)
  t.equal(response.body, 'added after boot')
})

t.test('staticDir is created recursively', async (t) => {
  const dir = t.testdir({})
  t.chdir(dir)
  await build(t, { enableStatic: true, staticDir: 'deep/er/public' })
  t.ok(existsSync(join(dir, 'deep', 'er', 'public')))
})

t.test('an absolute staticDir is used as it is', async (t) => {
  const dir = fixture(t)
  const { app } = await build(t, { enableStatic: true, staticDir: join(dir, 'public') })
  t.equal((await app.inject({ method: 'GET', url: '/assets/hello.txt' })).body, 'hello\n')
})

t.test('a staticDir that cannot be created fails createServer', async (t) => {
  const dir = fixture(t)
  const blocked = join(dir, 'public', 'hello.txt', 'inside')
  await t.rejects(buildServer({ rest: { allowedOrigins: [], enableStatic: true, staticDir: blocked } }), {
    code: 'FA_ERR_STATIC_DIR',
    message: new RegExp(`^createServer: cannot create staticDir '${blocked.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}': ENOTDIR`),
  })
})

t.test('without enableStatic nothing is served and no directory is made', async (t) => {
  const dir = fixture(t)
  t.chdir(dir)
  for (const rest of [{ staticDir: 'public' }, { staticDir: 'public', enableStatic: false }]) {
    const { app } = await build(t, rest)
    const response = await app.inject({ method: 'GET', url: '/assets/hello.txt' })
    t.equal(response.statusCode, 404)
    t.strictSame(response.json(), notFound)
  }
  await build(t, {})
  t.notOk(existsSync(join(dir, 'assets')))
})

t.test('both runtimes serve (the same adapter on Node)', async (t) => {
  const dir = fixture(t)
  t.chdir(dir)
  for (const runtime of ['bun', 'node', undefined] as const) {
    const { app } = await build(t, { enableStatic: true, staticDir: 'public' }, { runtime })
    const response = await app.inject({ method: 'GET', url: '/assets/hello.txt' })
    t.equal(response.statusCode, 200, `runtime ${runtime}`)
    t.equal(response.body, 'hello\n')
  }
})

t.test('middleware does not run for /assets/*: static comes first', async (t) => {
  const dir = fixture(t)
  t.chdir(dir)
  const server = await build(t, { enableStatic: true, staticDir: 'public' })
  const seen: string[] = []
  server.rest!.addMiddleware('*', (c) => {
    seen.push(c.req.path)
    return c.json({ status: false, message: 'blocked', data: {} }, 401)
  })
  const { app } = server
  const file = await app.inject({ method: 'GET', url: '/assets/hello.txt' })
  t.equal(file.statusCode, 200)
  t.equal(file.body, 'hello\n')
  const missing = await app.inject({ method: 'GET', url: '/assets/missing.txt' })
  t.equal(missing.statusCode, 404)
  t.strictSame(missing.json(), notFound)
  const port = await listen(t, app)
  const refused = await rawGet(port, '/assets/../secret.txt')
  t.equal(refused.status, 404)
  t.strictSame(JSON.parse(refused.body), notFound)
  t.strictSame(seen, [], 'the middleware saw none of them')

  const endpoint = await app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'execute', service: 'tasks', action: 'list', payload: {} } })
  t.equal(endpoint.statusCode, 401)
  t.strictSame(endpoint.json(), { status: false, message: 'blocked', data: {} })
  t.strictSame(seen, ['/api/services'], 'it still runs for everything else')
})

t.test('CORS applies to static files (it comes before static)', async (t) => {
  const dir = fixture(t)
  t.chdir(dir)
  const { app } = await build(t, { enableStatic: true, staticDir: 'public', allowedOrigins: ['https://app.example'] })
  const response = await app.inject({ method: 'GET', url: '/assets/hello.txt', headers: { origin: 'https://app.example' } })
  t.equal(response.statusCode, 200)
  t.equal(response.headers['access-control-allow-origin'], 'https://app.example')
  const preflight = await app.inject({
    method: 'OPTIONS',
    url: '/assets/hello.txt',
    headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
  })
  t.equal(preflight.statusCode, 204)
  t.equal(preflight.headers['access-control-allow-origin'], 'https://app.example')
})

t.test('rate limiting applies to static files (it comes before static)', async (t) => {
  const dir = fixture(t)
  t.chdir(dir)
  const { app } = await build(t, { enableStatic: true, staticDir: 'public', rateLimiting: { limitingHeader: 'x-client', limit: 1 } })
  const first = await app.inject({ method: 'GET', url: '/assets/hello.txt', headers: { 'x-client': 'one' } })
  t.equal(first.statusCode, 200)
  const second = await app.inject({ method: 'GET', url: '/assets/hello.txt', headers: { 'x-client': 'one' } })
  t.equal(second.statusCode, 429)
  t.strictSame(second.json(), { status: false, message: messages.rateLimited(900), data: {} })
})

t.test('an adapter that fails to load leaves /assets/* to the 404 envelope', async (t) => {
  const dir = fixture(t)
  const warnings: string[] = []
  const logger: ServiceLogger = {
    info: () => 'id',
    warn: (entry) => (warnings.push(`${entry.atFunction}: ${entry.message}`), 'id'),
    error: () => 'id',
  }
  const cases: Record<string, [StaticAdapterLoader, string]> = {
    'the import rejects': [() => Promise.reject(new Error('Cannot find package')), 'Cannot find package'],
    'the module has no plugin': [async () => ({ default: 42 }), messages.staticNoPlugin],
  }
  for (const [name, [load, reason]] of Object.entries(cases)) {
    const diagnostics = createDiagnostics(true, logger)
    const app = Fastify()
    t.teardown(() => app.close())
    installErrorEnvelope(app, { baseUrl: '/api', diagnostics, notFound: true })
    await app.register(staticPlugin, { dir: join(dir, 'public'), runtime: 'node', diagnostics, load })
    const response = await app.inject({ method: 'GET', url: '/assets/hello.txt' })
    t.equal(response.statusCode, 404, name)
    t.strictSame(response.json(), notFound, name)
    t.equal(warnings.at(-1), `rest.static: ${messages.staticUnavailable('node', reason)}`, name)
  }

  t.test('the same plugin with the real loader serves', async (t) => {
    const diagnostics = createDiagnostics(false)
    const app = Fastify()
    t.teardown(() => app.close())
    installErrorEnvelope(app, { baseUrl: '/api', diagnostics, notFound: true })
    await app.register(staticPlugin, { dir: join(dir, 'public'), runtime: 'node', diagnostics })
    const response = await app.inject({ method: 'GET', url: '/assets/hello.txt' })
    t.equal(response.statusCode, 200)
    t.equal(response.body, 'hello\n')
  })
})
