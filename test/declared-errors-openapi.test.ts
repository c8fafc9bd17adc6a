import t from 'tap'
import { Validator } from '@seriousme/openapi-schema-validator'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import openapiTS, { astToString } from 'openapi-typescript'
import { declaredServices } from './helpers/declared-errors.js'
import { buildServer } from './helpers/server.js'

// Declared errors in the OpenAPI document: one response per status (merged when several errors, or
// the framework, share it), a valid document, and a third-party client that sees the error types.

const run = promisify(execFile)
const root = fileURLToPath(new URL('..', import.meta.url))

const envelopeOf = (data: Record<string, unknown>) => ({
  type: 'object',
  properties: { status: { type: 'boolean', const: false }, message: { type: 'string' }, data },
  required: ['status', 'message', 'data'],
})
const notFoundData = { type: 'object', properties: { code: { type: 'string', const: 'NOT_FOUND' }, id: { type: 'string' } }, required: ['code', 'id'] }

t.test('responses per declared status', async (t) => {
  const server = await buildServer({ services: declaredServices, rest: { openapi: { enabled: true } } })
  t.teardown(() => server.close())
  const document = (await server.app.inject({ method: 'GET', url: '/api/openapi.json' })).json()
  t.same(await new Validator().validate(document), { valid: true }, 'valid OpenAPI 3.1')

  const get = document.paths['/api/services/tasks/get'].post.responses
  t.same(Object.keys(get), ['200', '400', '402', '403', '404', '410', '413', '415', '500', '504'], 'ordered by status')
  t.same(get['404'], {
    description: "No such route; or a declared error: `NOT_FOUND` (No such task)",
    content: { 'application/json': { schema: { anyOf: [{ $ref: '#/components/schemas/ErrorEnvelope' }, envelopeOf(notFoundData)] } } },
  }, 'a status the framework answers too: its envelope or the declared one')
  t.same(get['410'], {
    description: 'Declared error: `GONE` (The task was archived)',
    content: { 'application/json': { schema: envelopeOf({ type: 'object', properties: { code: { type: 'string', const: 'GONE' } }, required: ['code'] }) } },
  })
  t.match(get['402'].content['application/json'].schema.properties.data, { properties: { code: { const: 'QUOTA' }, limit: { type: 'number' } }, required: ['code', 'limit'] }, 'a zod data schema')
  t.match(get['400'], { description: /or a declared error: `LOCKED` \(LOCKED\)$/ })
  t.equal(get['400'].content['application/json'].schema.anyOf.length, 2)

  const update = document.paths['/api/services/tasks/update'].post.responses
  t.same(update['409'].content['application/json'].schema.properties.data.properties, { code: { type: 'string', const: 'CONFLICT' }, version: { type: 'integer' } })
  t.same(document.paths['/api/services/tasks/ping'].post.responses['404'], { $ref: '#/components/responses/Error404' }, 'an action without declared errors: as before')
})

const program = `import createClient from 'openapi-fetch'
import type { paths } from './schema.js'

// The declared errors are response types of their statuses: a guard on data.code picks one, no cast.
type Responses<P extends keyof paths> = paths[P]['post']['responses']
type NotFound = Responses<'/api/services/tasks/get'>[404]['content']['application/json']
type Conflict = Responses<'/api/services/tasks/update'>[409]['content']['application/json']
const isDeclared = <E extends { data: { code?: unknown } }>(error: unknown, code: string): error is E =>
  typeof error === 'object' && error !== null && (error as { data?: { code?: unknown } }).data?.code === code

const client = createClient<paths>({ baseUrl: process.argv[2] })
const missing = await client.POST('/api/services/tasks/get', { body: { id: 't-9' } })
const notFound = missing.error
let id: string | undefined
if (isDeclared<Extract<NotFound, { data: { code: 'NOT_FOUND' } }>>(notFound, 'NOT_FOUND')) id = notFound.data.id
const conflict = await client.POST('/api/services/tasks/update', { body: { id: 'a', version: 3 } })
let version: number | undefined
let code: 'CONFLICT' | undefined
if (isDeclared<Conflict>(conflict.error, 'CONFLICT')) {
  version = conflict.error.data.version
  code = conflict.error.data.code
}
console.log(JSON.stringify({ id, version, code, status: conflict.response.status }))
`

t.test('openapi-typescript + openapi-fetch see the error types', async (t) => {
  const server = await buildServer({ services: declaredServices, rest: { host: '127.0.0.1', openapi: { enabled: true } } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`

  const dir = mkdtempSync(join(root, 'test/.openapi-errors-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const document = await (await fetch(`${origin}/api/openapi.json`)).json()
  writeFileSync(join(dir, 'schema.ts'), astToString(await openapiTS(document)))
  writeFileSync(join(dir, 'program.ts'), program)
  writeFileSync(join(dir, 'wrong.ts'), `import createClient from 'openapi-fetch'\nimport type { paths } from './schema.js'\nconst client = createClient<paths>({})\ntype C = paths['/api/services/tasks/update']['post']['responses'][409]['content']['application/json']\nconst c = {} as C\nconst v: string = c.data.version\n`)
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  const tsc = join(root, 'node_modules/.bin/tsc')
  const check = (file: string) =>
    run(tsc, ['--strict', '--noEmit', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', join(dir, file)], { cwd: dir }).then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? String(error),
    )
  t.equal(await check('program.ts'), '', 'the program compiles under --strict')
  t.match(await check('wrong.ts'), /wrong\.ts\(6,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/, "CONFLICT's version is a number in the generated types")

  const { stdout } = await run(process.execPath, ['--import', 'tsx', join(dir, 'program.ts'), origin], { cwd: root })
  t.same(JSON.parse(stdout), { id: 't-9', version: 1, code: 'CONFLICT', status: 409 })
})
