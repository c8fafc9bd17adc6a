import t from 'tap'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import Type from 'typebox'
import { createAction, createServer, createService, deprecationNotice, messages, Ok, type Service } from '../lib/index.js'
import { deprecationHeaders, isPastSunset } from '../lib/deprecation.js'
import { createEngine } from '../lib/engine.js'
import { buildServer, execute, post } from './helpers/server.js'
import { connectClient, startMcpServer } from './helpers/mcp.js'
import { oncePerCi } from './helpers/pack.js'

const deprecated = { since: '2026-03-01', sunset: '2026-09-01T12:00:00Z', replacement: 'tasks.createV2', message: 'Titles move to `name`.' } as const

const tasks = createService({
  name: 'tasks',
  description: 'Tasks',
  actions: [
    createAction({
      name: 'create',
      description: 'Creates a task',
      validation: Type.Object({ title: Type.String() }),
      deprecated,
      handler: (data) => Ok({ title: data.title }),
    }),
    createAction({ name: 'soft', description: 'Deprecated, no sunset', deprecated: { since: '2026-01-15' }, handler: () => Ok({ ok: true }) }),
    createAction({
      name: 'ticks',
      description: 'Streams ticks',
      deprecated: { since: '2026-02-01' },
      async *handler() {
        yield { n: 1 }
      },
    }),
    createAction({ name: 'createV2', description: 'Creates a task', validation: Type.Object({ name: Type.String() }), handler: (data) => Ok({ name: data.name }) }),
  ],
})
const services: Service[] = [tasks]

// 2026-03-01T00:00:00Z and 2026-09-01T12:00:00Z
const DEPRECATION = '@1772323200'
const SUNSET = 'Tue, 01 Sep 2026 12:00:00 GMT'

t.test('the header values: an RFC 9651 date for Deprecation, an IMF-fixdate for Sunset', async (t) => {
  t.equal(Date.UTC(2026, 2, 1) / 1000, 1772323200)
  t.same(deprecationHeaders(deprecated), { deprecation: DEPRECATION, sunset: SUNSET })
  t.same(deprecationHeaders({ since: '2026-01-15' }), { deprecation: '@1768435200' }, 'no sunset, no Sunset header')
  t.equal(deprecationNotice(deprecated), 'Deprecated since 2026-03-01; removed after 2026-09-01T12:00:00Z; use tasks.createV2 instead. Titles move to `name`.')
  t.equal(deprecationNotice({ since: '2026-01-15' }), 'Deprecated since 2026-01-15.')
  t.ok(isPastSunset(deprecated, Date.UTC(2026, 8, 1, 12)))
  t.notOk(isPastSunset(deprecated, Date.UTC(2026, 8, 1, 11)))
  t.notOk(isPastSunset({ since: '2026-01-15' }, Date.UTC(2099, 0, 1)), 'no sunset: never past it')
})

t.test('the action table holds each deprecation once, as every surface says it: the headers and the notice', async (t) => {
  const engine = createEngine({ services })
  t.same(engine.table.get('tasks', 'create')?.deprecation, { headers: { deprecation: DEPRECATION, sunset: SUNSET }, notice: deprecationNotice(deprecated) })
  t.same(engine.table.get('tasks', 'soft')?.deprecation, { headers: { deprecation: '@1768435200' }, notice: 'Deprecated since 2026-01-15.' })
  t.equal(engine.table.get('tasks', 'createV2')?.deprecation, undefined, 'not deprecated: nothing')
  t.ok(Object.isFrozen(engine.table.get('tasks', 'create')?.deprecation?.headers), 'shared by every answer: frozen')
})

t.test('refused at boot: a deprecation that is not well formed', async (t) => {
  const cases: Array<[unknown, string]> = [
    [{ since: 'March 1st' }, "'since' must be an ISO 8601 date such as 2026-03-01"],
    [{}, "'since' must be an ISO 8601 date such as 2026-03-01"],
    [{ since: '2026-02-30x' }, "'since' must be an ISO 8601 date such as 2026-03-01"],
    [{ since: '2026-03-01', sunset: 'soon' }, "'sunset' must be an ISO 8601 date such as 2026-09-01"],
    [{ since: '2026-03-01', sunset: '2026-02-01' }, "'sunset' comes before 'since'"],
    [{ since: '2026-03-01', replacement: '' }, "'replacement' must be a non-empty string"],
    [{ since: '2026-03-01', message: 42 }, "'message' must be a non-empty string"],
    [{ since: '2026-03-01', sunsetAt: '2026-09-01' }, "unknown key 'sunsetAt'"],
    ['2026-03-01', 'it must be an object { since, sunset?, replacement?, message? }'],
  ]
  for (const [value, reason] of cases) {
    const action = { name: 'old', description: '', deprecated: value, handler: () => Ok({}) } as never
    await t.rejects(createServer({ serverName: 't', logServices: false, forceNewInstance: true, services: [{ name: 's', description: '', actions: [action] }] }), { code: 'FA_ERR_CONFIG', message: messages.invalidDeprecation('s.old', reason) }, JSON.stringify(value))
  }
})

t.test('REST answers carry Deprecation and Sunset: the one endpoint, the action route, a refusal, a stream', async (t) => {
  const server = await buildServer({ services, rest: { openapi: { enabled: true } } })
  t.teardown(() => server.close())
  const ok = await execute(server.app, 'tasks', 'create', { title: 'a' })
  t.equal(ok.statusCode, 200)
  t.equal(ok.headers.deprecation, DEPRECATION)
  t.equal(ok.headers.sunset, SUNSET)

  const route = await server.app.inject({ method: 'POST', url: '/api/services/tasks/create', payload: { title: 'a' } })
  t.equal(route.statusCode, 200)
  t.equal(route.headers.deprecation, DEPRECATION)
  t.equal(route.headers.sunset, SUNSET)

  const refused = await execute(server.app, 'tasks', 'create', { title: 7 })
  t.equal(refused.statusCode, 400)
  t.equal(refused.body.message, messages.validationFailed)
  t.equal(refused.headers.deprecation, DEPRECATION, 'a refusal of the deprecated action says it too')

  const soft = await execute(server.app, 'tasks', 'soft')
  t.equal(soft.headers.deprecation, '@1768435200')
  t.notOk('sunset' in soft.headers, 'no sunset date, no Sunset header')

  const stream = await server.app.inject({ method: 'POST', url: '/api/services/tasks/ticks', payload: {}, headers: { accept: 'text/event-stream' } })
  t.equal(stream.statusCode, 200)
  t.match(stream.headers['content-type'], /^text\/event-stream/)
  t.equal(stream.headers.deprecation, '@1769904000')

  const current = await execute(server.app, 'tasks', 'createV2', { name: 'a' })
  t.equal(current.statusCode, 200)
  t.notOk('deprecation' in current.headers, 'an action that is not deprecated')
  t.notOk('sunset' in current.headers)
  const explore = await post(server.app, { intent: 'explore', service: '*', action: '*', payload: {} })
  t.notOk('deprecation' in explore.headers, 'discovery answers are not deprecated')
})

t.test('OpenAPI: the operation is deprecated, with the notice; explore and schema show it', async (t) => {
  const server = await buildServer({ services, rest: { openapi: { enabled: true } } })
  t.teardown(() => server.close())
  const document = (await server.app.inject({ method: 'GET', url: '/api/openapi.json' })).json()
  const operation = document.paths['/api/services/tasks/create'].post
  t.equal(operation.deprecated, true)
  t.ok(operation.description.startsWith(`${deprecationNotice(deprecated)}\n\nCreates a task\n\n`), 'the description opens with the notice, then the action\'s own')
  t.notOk('deprecated' in document.paths['/api/services/tasks/createV2'].post)

  const detail = await post(server.app, { intent: 'explore', service: 'tasks', action: 'create', payload: {} })
  t.same(detail.body.data.deprecated, { ...deprecated, notice: deprecationNotice(deprecated) })
  const list = await post(server.app, { intent: 'explore', service: 'tasks', action: '*', payload: {} })
  const summaries = list.body.data.actions as Array<{ name: string; deprecated?: { notice: string } }>
  t.equal(summaries.find((a) => a.name === 'soft')?.deprecated?.notice, 'Deprecated since 2026-01-15.')
  t.notOk(summaries.find((a) => a.name === 'createV2')?.deprecated)
  const schema = await post(server.app, { intent: 'schema', service: 'tasks', action: 'create', payload: { output: true } })
  t.equal(schema.body.data.create.deprecated.since, '2026-03-01')
})

t.test('MCP: the tool description starts with the notice (the SDK client over HTTP)', async (t) => {
  const server = await startMcpServer(t, { services })
  const client = await connectClient(t, server.url)
  const { tools } = await client.listTools()
  const tool = tools.find((entry) => entry.name === 'tasks_create')
  t.equal(tool?.description, `${deprecationNotice(deprecated)} Creates a task`)
  t.equal(tools.find((entry) => entry.name === 'tasks_createV2')?.description, 'Creates a task')
})

t.test('the typed client: a deprecated action is @deprecated in the editor (language service), the others are not', { skip: oncePerCi }, async (t) => {
  const root = fileURLToPath(new URL('../', import.meta.url))
  const scratch = join(root, 'test', `.deprecation-${process.pid}`)
  mkdirSync(scratch, { recursive: true })
  t.teardown(() => rmSync(scratch, { recursive: true, force: true }))
  const file = join(scratch, 'use.ts')
  const code = `import Type from 'typebox'
import { createAction, createService, Ok } from '../../lib/index.js'
import { createClient } from '../../lib/client/index.js'
const create = createAction({ name: 'create', description: '', validation: Type.Object({ title: Type.String() }), deprecated: { since: '2026-03-01', replacement: 'tasks.createV2' }, handler: (d) => Ok({ title: d.title }) })
const soft = createAction({ name: 'soft', description: '', deprecated: { since: '2026-01-15' }, handler: () => Ok({}) })
const createV2 = createAction({ name: 'createV2', description: '', handler: () => Ok({}) })
const tasks = createService({ name: 'tasks', description: '', actions: [create, soft, createV2] })
const client = createClient<[typeof tasks]>({ baseUrl: 'http://localhost/api' })
export async function use() {
  const made = await client.tasks.create({ title: 'a' })
  if (made.ok) made.value.title.toUpperCase()
  await client.tasks.soft()
  await client.tasks.createV2()
}
`
  writeFileSync(file, code)
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!
  const host: ts.LanguageServiceHost = {
    getScriptFileNames: () => [file],
    getScriptVersion: () => '1',
    getScriptSnapshot: (name) => (ts.sys.fileExists(name) ? ts.ScriptSnapshot.fromString(ts.sys.readFile(name)!) : undefined),
    getCurrentDirectory: () => root,
    getCompilationSettings: () => ({ ...config.options, noEmit: true }),
    getDefaultLibFileName: ts.getDefaultLibFilePath,
    fileExists: ts.sys.fileExists,
    readFile: ts.sys.readFile,
    readDirectory: ts.sys.readDirectory,
    directoryExists: ts.sys.directoryExists,
    getDirectories: ts.sys.getDirectories,
  }
  const service = ts.createLanguageService(host)
  t.same(service.getSemanticDiagnostics(file).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')), [], 'it type-checks: deprecated is a warning, not an error')
  // Editors strike a call through on the suggestion diagnostic `reportsDeprecated`.
  const struck = service
    .getSuggestionDiagnostics(file)
    .filter((d) => d.reportsDeprecated)
    .map((d) => code.slice(d.start!, d.start! + d.length!))
  t.same(struck.sort(), ['create', 'soft'], 'the two deprecated calls, not createV2')
  const at = (text: string) => code.indexOf(text) + text.length - 1
  const tags = (position: number) => (service.getQuickInfoAtPosition(file, position)?.tags ?? []).map((tag) => tag.name)
  t.ok(tags(at('client.tasks.create')).includes('deprecated'), 'quick info of create shows @deprecated')
  t.notOk(tags(at('client.tasks.createV2')).includes('deprecated'), 'createV2 does not')
})
