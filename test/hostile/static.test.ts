import t, { type Test } from 'tap'
import { symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { DEFAULTS, messages } from '../../lib/index.js'
import { buildServer } from '../helpers/server.js'

// Finding 7: static files followed symbolic links out of the root (`/assets/etclink/passwd`
// answered 200). A link that leaves staticDir now answers the 404 envelope unless
// `rest.staticFollowSymlinks` is true; a link that stays inside still works.

const SECRET = 'TOPSECRET-outside-the-static-dir'
const notFound = { status: false, message: messages.routeNotFound('/api'), data: {} }

function fixture(t: Test): string {
  const dir = t.testdir({
    outside: { 'passwd': SECRET },
    'secret.txt': SECRET,
    public: { 'hello.txt': 'hello\n', sub: { 'a.txt': 'nested\n' } },
  })
  symlinkSync(join(dir, 'outside'), join(dir, 'public', 'etclink'))
  symlinkSync(join(dir, 'secret.txt'), join(dir, 'public', 'secret-link.txt'))
  symlinkSync(join(dir, 'public', 'sub'), join(dir, 'public', 'inner'))
  return dir
}

async function build(t: Test, rest: Record<string, unknown> = {}) {
  const dir = fixture(t)
  t.chdir(dir)
  const server = await buildServer({ rest: { enableStatic: true, staticDir: 'public', ...rest } })
  t.teardown(() => server.close())
  return server.app
}

t.test('refused by default: a linked directory and a linked file that leave the root answer 404', async (t) => {
  t.equal(DEFAULTS.rest.staticFollowSymlinks, false)
  const app = await build(t)
  for (const url of ['/assets/etclink/passwd', '/assets/secret-link.txt']) {
    const response = await app.inject({ method: 'GET', url })
    t.equal(response.statusCode, 404, url)
    t.same(response.json(), notFound)
    t.notMatch(response.body, SECRET)
  }
})

t.test('a link that stays inside the root, and plain files, are served', async (t) => {
  const app = await build(t)
  const inner = await app.inject({ method: 'GET', url: '/assets/inner/a.txt' })
  t.equal(inner.statusCode, 200)
  t.equal(inner.body, 'nested\n')
  const plain = await app.inject({ method: 'GET', url: '/assets/hello.txt' })
  t.equal(plain.statusCode, 200)
  const missing = await app.inject({ method: 'GET', url: '/assets/nope.txt' })
  t.equal(missing.statusCode, 404)
  t.same(missing.json(), notFound)
})

t.test('rest.staticFollowSymlinks: true serves them', async (t) => {
  const app = await build(t, { staticFollowSymlinks: true })
  const response = await app.inject({ method: 'GET', url: '/assets/etclink/passwd' })
  t.equal(response.statusCode, 200)
  t.equal(response.body, SECRET)
})

t.test('rest.staticFollowSymlinks must be a boolean', async (t) => {
  await t.rejects(buildServer({ rest: { staticFollowSymlinks: 'yes' as never } }), { code: 'FA_ERR_CONFIG', message: /rest\.staticFollowSymlinks/ })
})
