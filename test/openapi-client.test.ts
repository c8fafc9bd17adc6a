import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import openapiTS, { astToString } from 'openapi-typescript'
import { everythingServices } from './helpers/openapi.js'
import { buildServer } from './helpers/server.js'

// A third-party client from the document alone: openapi-typescript generates the types from the
// served document, a program using openapi-fetch with them compiles under `tsc --strict`, then calls
// the live server over a real socket.

const run = promisify(execFile)
const root = fileURLToPath(new URL('..', import.meta.url))

const program = `import createClient from 'openapi-fetch'
import type { paths } from './schema.js'

const client = createClient<paths>({ baseUrl: process.argv[2] })

const person = await client.POST('/api/services/people/get', { body: { id: 2 } })
if (!person.data) throw new Error('people.get failed: ' + JSON.stringify(person.error))
// Typed from the output schema: data.name is a string, data.id a number.
const name: string = person.data.data.name
const id: number = person.data.data.id

const count = await client.POST('/api/services/people/count', { body: {} })
const total: number | undefined = count.data?.data.result

const refused = await client.POST('/api/services/tasks/echo', { body: { title: '', count: 1 } })
const message: string | undefined = refused.error?.message

const viaEndpoint = await client.POST('/api/services', { body: { intent: 'execute', service: 'people', action: 'find', payload: { name: 'Bo' } } })

console.log(JSON.stringify({ name, id, total, status: refused.response.status, message, endpoint: viaEndpoint.data }))
`

t.test('openapi-typescript + openapi-fetch against a live server', async (t) => {
  const server = await buildServer({ services: everythingServices, rest: { host: '127.0.0.1', openapi: { enabled: true } } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`

  const dir = mkdtempSync(join(root, 'test/.openapi-client-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const document = await (await fetch(`${origin}/api/openapi.json`)).json()
  writeFileSync(join(dir, 'schema.ts'), astToString(await openapiTS(document)))
  writeFileSync(join(dir, 'program.ts'), program)
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))

  const tsc = join(root, 'node_modules/.bin/tsc')
  const compiled = await run(tsc, ['--strict', '--noEmit', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', join(dir, 'program.ts')], { cwd: dir }).then(
    () => '',
    (error: { stdout?: string }) => error.stdout ?? String(error),
  )
  t.equal(compiled, '', 'the program compiles under --strict')

  const { stdout } = await run(process.execPath, ['--import', 'tsx', join(dir, 'program.ts'), origin], { cwd: root })
  t.same(JSON.parse(stdout), {
    name: 'Ada',
    id: 2,
    total: 3,
    status: 400,
    message: 'Validation failed',
    endpoint: { status: true, message: "Action 'people.find' executed", data: { matches: ['Bo'] } },
  })

  // The types are the document's, so a wrong call does not compile.
  writeFileSync(join(dir, 'wrong.ts'), `import createClient from 'openapi-fetch'\nimport type { paths } from './schema.js'\nconst client = createClient<paths>({})\nawait client.POST('/api/services/people/get', { body: { id: 'two' } })\nawait client.POST('/api/services/people/secret', { body: {} })\n`)
  const wrong = await run(tsc, ['--strict', '--noEmit', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', join(dir, 'wrong.ts')], { cwd: dir }).then(
    () => '',
    (error: { stdout?: string }) => error.stdout ?? '',
  )
  t.match(wrong, /wrong\.ts\(4,\d+\): error TS2322/, 'a string id is refused')
  t.match(wrong, /wrong\.ts\(5,\d+\): error TS2345/, 'the hidden action has no path')
})
