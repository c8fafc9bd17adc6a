/**
 * A front end that uses only the client: `npm install <tarball>` and nothing else (docs/client.md).
 * fastify and drizzle-orm are optional peers (peerDependenciesMeta), so npm leaves them out; typebox,
 * the one required peer (the schemas' types), comes by itself. The client entry then loads under
 * plain Node and calls a server (the packed package with its peers) over a real socket. The same
 * install type-checks against the server's services in two-installs-ts5/ts7.test.ts.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { copyFile, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { cleanEnv, frontendInstall, packAndInstall, repoRoot, run, type FrontendInstall, type PackedInstall } from '../helpers/pack.js'

t.setTimeout(1_800_000)

const fixtures = join(repoRoot, 'test', 'package', 'fixtures')
let packed: PackedInstall
let frontend: FrontendInstall

t.before(async () => {
  packed = await packAndInstall()
  frontend = await frontendInstall()
  t.comment(`front end: ${frontend.packages.length} packages, npm install ${frontend.installMs} ms`)
})

t.test('npm install <tarball> alone: its own copy and typebox, no fastify, no drizzle-orm, no optional peer', async (t) => {
  const modules = join(frontend.project, 'node_modules')
  t.ok(existsSync(join(modules, 'fastify-actions', 'package.json')), 'fastify-actions is installed')
  t.ok(existsSync(join(modules, 'typebox', 'package.json')), 'typebox, the required peer, is installed by npm')
  for (const name of ['fastify', 'drizzle-orm', '@modelcontextprotocol/sdk', '@scalar/fastify-api-reference']) {
    t.notOk(frontend.packages.includes(name), `${name} is not installed`)
    t.notOk(existsSync(join(modules, name)), `no node_modules/${name}`)
  }
  const manifest = JSON.parse(await readFile(join(modules, 'fastify-actions', 'package.json'), 'utf8'))
  t.same(manifest.peerDependenciesMeta?.fastify, { optional: true }, 'fastify is an optional peer')
  t.same(manifest.peerDependenciesMeta?.['drizzle-orm'], { optional: true }, 'drizzle-orm is an optional peer')
  t.notOk(manifest.peerDependenciesMeta?.typebox, 'typebox is a required peer')
})

t.test('the client entry loads without the server peers and calls the server over a socket', async (t) => {
  await copyFile(join(fixtures, 'client-server.mjs'), join(packed.project, 'client-server.mjs'))
  await copyFile(join(fixtures, 'client-call.mjs'), join(frontend.project, 'client-call.mjs'))
  const server = spawn(process.execPath, ['client-server.mjs'], { cwd: packed.project, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const closed = once(server, 'close')
  t.teardown(async () => {
    if (server.exitCode === null) server.kill('SIGTERM')
    await closed
  })
  // Bounded by the server's own exit, not by a clock: it either prints its origin or ends.
  let origin: string | undefined
  while (!origin && server.exitCode === null) {
    origin = /^LISTENING (\S+)$/m.exec(output)?.[1]
    if (!origin) await new Promise((resolve) => setTimeout(resolve, 50))
  }
  t.ok(origin, 'the server listens', { output })
  if (!origin) return

  const result = await run(process.execPath, ['client-call.mjs', origin], { cwd: frontend.project, timeout: 120_000 })
  t.equal(result.code, 0, 'the front end program exits 0', { stderr: result.stderr })
  const line = result.stdout.split('\n').find((l) => l.startsWith('RESULT '))
  t.ok(line, 'it prints its result', { stdout: result.stdout, stderr: result.stderr })
  const out = line ? JSON.parse(line.slice('RESULT '.length)) : {}
  t.same(out.added, { ok: true, value: { sum: 42 } })
  // A framework failure carries no code (docs/client.md): its status and message tell it apart.
  t.same(out.invalid, { ok: false, httpStatus: 400, message: 'Validation failed' })
  t.same(out.missing, { ok: false, declared: true, code: 'NOT_FOUND', data: { code: 'NOT_FOUND', id: 't-9' } }, 'a declared error, its code read from data.code')
  // It really ran without them: resolving fastify from the front end fails.
  const probe = await run(process.execPath, ['--input-type=module', '-e', "await import('fastify').then(() => console.log('found'), (e) => console.log(e.code))"], { cwd: frontend.project })
  t.equal(probe.stdout.trim(), 'ERR_MODULE_NOT_FOUND', 'fastify cannot be imported in the front end')
})
