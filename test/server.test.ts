import t from 'tap'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createServer, createAction, getContext, messages, Ok, type ServiceLogger } from '../lib/index.js'
import { echoService } from './helpers/fixtures.js'

const base = { serverName: 'srv', logServices: false, forceNewInstance: true, services: [echoService] }

function runBoot(mode: string, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = fileURLToPath(new URL('./fixtures/boot.ts', import.meta.url))
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import=tsx', script], { env: { ...process.env, BOOT: mode, ...env }, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr })
    })
  })
}

t.test('empty services throw a descriptive error', async (t) => {
  await t.rejects(createServer({ ...base, services: [] }), { message: messages.emptyServices })
  await t.rejects(createServer({ ...base, services: undefined as never }), { message: messages.emptyServices })
})

t.test('duplicates throw at boot', async (t) => {
  await t.rejects(createServer({ ...base, services: [echoService, echoService] }), { message: "Duplicate service name 'tasks'" })
})

t.test('the services table is printed unless logServices is false', async (t) => {
  const tables = t.capture(console, 'table')
  const server = await createServer({ ...base, logServices: undefined })
  t.teardown(() => server.close())
  t.same(tables()[0].args[0], [{ Service: 'tasks', Description: 'Test tasks', Actions: 4 }])
  const quiet = t.capture(console, 'table')
  await createServer(base)
  t.equal(quiet().length, 0)
})

t.test('nothing is printed before listen: the URLs come once the app listens (test/printed-urls.test.ts)', async (t) => {
  const logs = t.capture(console, 'log')
  const server = await createServer({ ...base, rest: { baseUrl: '/v2/', host: '0.0.0.0', port: 3000, allowedOrigins: [], enableStatus: true } })
  t.teardown(() => server.close())
  t.same(logs(), [])
})

t.test('without rest there is no REST app; websocket and rpc are accepted and ignored', async (t) => {
  const server = await createServer({ ...base, websocket: { port: 1 }, rpc: { enabled: true } })
  t.equal(server.rest, undefined)
  t.ok(server.engine)
  t.equal(server.context, getContext())
  t.same(await server.engine.executeAction('tasks', 'list', {}, server.context), { ok: true, value: [1, 2, 3] })
})

t.test('singleton rule: a second call returns the first instance with a warning', async (t) => {
  const first = await createServer({ ...base, forceNewInstance: true })
  const warnings = t.capture(console, 'warn')
  const second = await createServer({ ...base, forceNewInstance: false, serverName: 'other' })
  t.equal(second, first)
  t.equal(warnings().length, 1)
  const third = await createServer({ ...base, forceNewInstance: true })
  t.not(third, first, 'forceNewInstance makes a new one')
  t.equal(getContext(), third.context)
})

t.test('resources are attached to the context; diagnostics go through resources.logger', async (t) => {
  const entries: { level: string; atFunction: string; message: string }[] = []
  const logger: ServiceLogger = {
    info: (e) => (entries.push({ level: 'info', ...e }), 'id-i'),
    warn: (e) => (entries.push({ level: 'warn', ...e }), 'id-w'),
    error: (e) => (entries.push({ level: 'error', ...e }), 'id-e'),
  }
  const flaky = createAction({ name: 'flaky', description: '', handler: () => { throw new Error('hook down') } })
  const guarded = createAction({ name: 'guarded', description: '', hooks: { before: [{ service: 'd', action: 'flaky', isCritical: false }] }, handler: () => Ok(1) })
  const server = await createServer({ ...base, diagnostics: true, resources: { logger, database: 'db' }, services: [{ name: 'd', description: '', actions: [flaky, guarded] }] })
  t.equal(server.context.resources.database, 'db')
  await server.engine.executeAction('d', 'guarded', {}, server.context)
  t.match(entries, [{ level: 'warn', atFunction: 'engine.runHooks', message: /d\.flaky/ }])

  const silent = await createServer({ ...base, resources: { logger }, services: [{ name: 'd', description: '', actions: [flaky, guarded] }] })
  entries.length = 0
  await silent.engine.executeAction('d', 'guarded', {}, silent.context)
  t.same(entries, [], 'diagnostics off: nothing written')
})

t.test('diagnostics fall back to the console', async (t) => {
  const flaky = createAction({ name: 'flaky', description: '', handler: () => { throw new Error('hook down') } })
  const guarded = createAction({ name: 'guarded', description: '', hooks: { before: [{ service: 'd', action: 'flaky', isCritical: false }] }, handler: () => Ok(1) })
  const server = await createServer({ ...base, diagnostics: true, services: [{ name: 'd', description: '', actions: [flaky, guarded] }] })
  const warns = t.capture(console, 'warn')
  await server.engine.executeAction('d', 'guarded', {}, server.context)
  t.match(warns()[0].args[0], /\[engine\.runHooks\].*d\.flaky/)
})

t.test('onBoot: success logs Booted in <n>ms and createServer returns after it', async (t) => {
  const result = await runBoot('ok')
  t.equal(result.code, 0)
  t.match(result.stdout, /Booted in \d+ms\n[\s\S]*AFTER BOOT/)
})

t.test('onBoot: an Err, a throw or a timeout exits with code 1 and never returns', async (t) => {
  for (const [mode, text] of [
    ['err', /onBoot failed: database unreachable/],
    ['throw', /onBoot failed: boot exploded/],
    ['timeout', /onBoot timed out after 200ms \(raise onBoot\.maxWaitTime if the start needs longer\)/],
    // The deadline's timer cannot fire while the step holds the event loop: the elapsed time decides.
    ['block', /onBoot timed out after 200ms/],
  ] as const) {
    const result = await runBoot(mode)
    t.equal(result.code, 1, `${mode}: exit code 1`)
    t.match(result.stderr, text, `${mode}: logged`)
    t.notMatch(result.stdout, /AFTER BOOT/, `${mode}: createServer never returned`)
  }
  const viaDiagnostics = await runBoot('timeout', { DIAGNOSTICS: '1' })
  t.match(viaDiagnostics.stderr, /\[createServer\.onBoot\] onBoot timed out after 200ms/)
})

t.test('onBoot receives the context', async (t) => {
  let seen: unknown
  const server = await createServer({ ...base, onBoot: { fn: (context) => ((seen = context), Ok(null)) } })
  t.equal(seen, server.context)
})

t.test('close() closes the REST app and frees the singleton', async (t) => {
  await (await createServer({ ...base, forceNewInstance: false })).close() // the singleton an earlier test left
  const server = await createServer({ ...base, forceNewInstance: false, rest: { baseUrl: '/api', allowedOrigins: [] } })
  await server.close()
  const next = await createServer({ ...base, forceNewInstance: false })
  t.not(next, server)
  await next.close()
})

t.test('the singleton never stands in for a REST server it is not', async (t) => {
  const bare = await createServer({ ...base, forceNewInstance: false })
  t.teardown(() => bare.close())
  const warnings = t.capture(console, 'warn')
  await t.rejects(createServer({ ...base, forceNewInstance: false, rest: { baseUrl: '/api', allowedOrigins: [] } }), {
    code: 'FA_ERR_SINGLETON_MISMATCH',
    message: 'createServer: the existing server has no REST interface but this call asks for one; pass forceNewInstance: true',
  })
  t.equal(warnings().length, 1)
  t.equal(await createServer({ ...base, forceNewInstance: false }), bare, 'without rest the rule holds as before')
})

t.test('with auth but no REST interface, protected actions fail closed', async (t) => {
  const guarded = createAction({ name: 'guarded', description: '', isProtected: true, handler: () => Ok('secret') })
  const open = createAction({ name: 'open', description: '', handler: () => Ok('open') })
  const server = await createServer({ ...base, auth: { secret: 'x'.repeat(32) }, services: [{ name: 'a', description: '', actions: [guarded, open] }] })
  t.same(await server.engine.executeAction('a', 'guarded', {}, server.context), {
    ok: false,
    error: messages.authFailed(messages.authReasons.noRequest),
    code: 'FA_ERR_AUTH',
    data: {},
  })
  t.same(await server.engine.executeAction('a', 'open', {}, server.context), { ok: true, value: 'open' })
})

t.test('concurrent createServer calls share one server; getContext throws again after close', async (t) => {
  const [a, b] = await Promise.all([createServer({ ...base, forceNewInstance: false }), createServer({ ...base, forceNewInstance: false })])
  t.equal(a, b)
  await a.close()
  t.throws(() => getContext(), { message: messages.notInitialized })
})

t.test('an invalid config is rejected even when a server exists', async (t) => {
  const first = await createServer({ ...base, forceNewInstance: false })
  t.teardown(() => first.close())
  await t.rejects(createServer({ ...base, forceNewInstance: false, services: [] }), { message: messages.emptyServices })
})

t.test('a REST config a plugin refuses: createServer throws and leaves no context behind', async (t) => {
  await createServer({ ...base }).then((server) => server.close())
  await t.rejects(createServer({ ...base, rest: { baseUrl: '/api', allowedOrigins: 'nope' as never } }), { message: messages.corsAllowedOrigins })
  t.throws(() => getContext(), { message: messages.notInitialized })
})
