/**
 * The typed client across two installs of the package: a server project (the packed tarball and its
 * peers) exports its `services`; a client project with its OWN install of the same tarball (TypeBox,
 * none of the server's other peers) imports that type and calls `createClient<typeof services>`. Two
 * copies of the declarations are two `ServerContext` classes to TypeScript: the client's constraint
 * must be structural. Checked with `skipLibCheck: false` under the TypeScript 5.9 the project uses
 * and the TypeScript 7 (the native compiler) that `npm i typescript` installs today; wrong calls are
 * still rejected (`@ts-expect-error` lines that stop being errors fail the check).
 */
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import t from 'tap'
import { packAndInstall, run, type PackedInstall } from '../helpers/pack.js'

t.setTimeout(900_000)

const serverServices = `import Type from 'typebox'
import { createAction, createService, Err, Fail, Ok } from 'fastify-actions'

const create = createAction({
  name: 'create',
  description: 'Creates a task',
  validation: Type.Object({ title: Type.String({ minLength: 1 }), done: Type.Optional(Type.Boolean()) }),
  output: Type.Object({ id: Type.String(), title: Type.String(), done: Type.Boolean() }),
  handler: (data) => (data.title ? Ok({ id: 't-1', title: data.title, done: data.done ?? false }) : Err('title is empty')),
})
const list = createAction({
  name: 'list',
  description: 'Lists tasks',
  handler: (_data, context) => Ok({ items: [{ id: 't-1', title: 'x' }], by: context.getAuth()?.userId ?? null }),
})
const get = createAction({
  name: 'get',
  description: 'A task, or its declared NOT_FOUND',
  validation: Type.Object({ id: Type.String() }),
  errors: { NOT_FOUND: { status: 404, data: Type.Object({ id: Type.String() }) } },
  handler: (data) => (data.id === 't-1' ? Ok({ id: 't-1' }) : Fail('NOT_FOUND', { id: data.id })),
})
export const services = [createService({ name: 'tasks', description: 'Tasks', actions: [create, list, get] })]
`

const clientProgram = `import { createClient, type ClientResult } from 'fastify-actions/client'
import type { services } from '../server/services.js'

const api = createClient<typeof services>({ baseUrl: 'http://localhost:8000/api' })

const created = await api.tasks.create({ title: 'Write docs' })
if (created.ok) {
  const id: string = created.value.id
  const done: boolean = created.value.done
  console.log(id, done)
} else {
  const code: string | undefined = created.error.code
  console.log(code)
}
const listed: ClientResult<{ items: { id: string; title: string }[]; by: string | null }> = await api.tasks.list()
console.log(listed.ok)

// @ts-expect-error: no such action
api.tasks.remove
// @ts-expect-error: no such service
api.users
// @ts-expect-error: title must be a string
await api.tasks.create({ title: 42 })
// @ts-expect-error: title is required
await api.tasks.create({ done: true })
if (created.ok) {
  // @ts-expect-error: the output has no such field
  created.value.priority
}
// Declared errors, typed across installs: the code narrows the data.
const got = await api.tasks.get({ id: 't-2' })
if (!got.ok && got.error.code === 'NOT_FOUND') {
  const missing: string = got.error.data.id
  // @ts-expect-error: NOT_FOUND's data has no such field
  got.error.data.title
  console.log(missing)
}
// @ts-expect-error: not a code of tasks.get
if (!got.ok && got.error.code === 'CONFLICT') console.log('never')
`

const tsconfig = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2023', 'DOM', 'DOM.Iterable'],
    types: [],
    strict: true,
    noEmit: true,
    skipLibCheck: false,
  },
  files: ['client.ts'],
}

let packed: PackedInstall
let clientDir: string

t.before(async () => {
  packed = await packAndInstall()
  // The server project: the shared packed install (tarball + peers), its services in a folder of its own.
  const serverDir = join(packed.project, 'server')
  await mkdir(serverDir, { recursive: true })
  await writeFile(join(serverDir, 'services.ts'), serverServices)
  // The client project: its own install of the tarball, beside the server project, kept per source state.
  const root = join(dirname(packed.project), 'frontend-install')
  clientDir = join(packed.project, 'client')
  const ready = join(root, 'ready')
  if (!existsSync(ready)) {
    await rm(root, { recursive: true, force: true })
    await mkdir(root, { recursive: true })
    await writeFile(join(root, 'package.json'), JSON.stringify({ name: 'client-app', private: true, type: 'module' }))
    // A front end's install: its own copy of fastify-actions with TypeBox (the schemas' types), none of the
    // server's other peers (no fastify, no drizzle-orm, no optional ones), and both compilers. Its copy
    // then differs from the server's to TypeScript (another set of peers), as in a real second project.
    const install = await run('npm', ['install', packed.tarball, 'typebox', 'typescript@7', 'tsc59@npm:typescript@5.9', '--legacy-peer-deps', '--no-audit', '--no-fund'], { cwd: root, timeout: 600_000 })
    if (install.code !== 0) throw new Error(`npm install failed\n${install.stdout}\n${install.stderr}`)
    await writeFile(ready, '')
  }
  // The client's sources sit beside the server's (../server/services.js), with the client install's node_modules.
  await mkdir(clientDir, { recursive: true })
  await rm(join(clientDir, 'node_modules'), { recursive: true, force: true })
  await import('node:fs/promises').then(({ symlink }) => symlink(join(root, 'node_modules'), join(clientDir, 'node_modules'), 'dir'))
  await writeFile(join(clientDir, 'package.json'), JSON.stringify({ name: 'client-app', private: true, type: 'module' }))
  await writeFile(join(clientDir, 'client.ts'), clientProgram)
  await writeFile(join(clientDir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2))
})

t.test("the client project has its own copy of fastify-actions and none of the server's peers but TypeBox", async (t) => {
  const own = join(clientDir, 'node_modules', 'fastify-actions', 'package.json')
  t.ok(existsSync(own), 'its own install')
  t.not((await readFile(own, 'utf8')).length, 0)
  t.notOk(existsSync(join(clientDir, 'node_modules', '@modelcontextprotocol', 'sdk')), 'no MCP SDK')
  t.notOk(existsSync(join(clientDir, 'node_modules', '@scalar', 'fastify-api-reference')), 'no reference page')
  t.notOk(existsSync(join(clientDir, 'node_modules', 'fastify', 'package.json')), 'no fastify')
  t.notOk(existsSync(join(clientDir, 'node_modules', 'drizzle-orm', 'package.json')), 'no drizzle-orm')
})

/**
 * The command of a compiler: TypeScript 5.9's JavaScript `tsc` on this Node; TypeScript 7's native
 * executable (its `bin/tsc` is an ES module that only starts it, and a test runner's require hooks
 * in the environment trip over it).
 */
function tscCommand(compiler: 'tsc59' | 'typescript'): [string, string[]] {
  if (compiler === 'tsc59') return [process.execPath, [join(clientDir, 'node_modules', 'tsc59', 'bin', 'tsc')]]
  return [join(clientDir, 'node_modules', '@typescript', `typescript-${process.platform}-${process.arch}`, 'lib', 'tsc'), []]
}

for (const [label, compiler] of [
  ['TypeScript 5.9', 'tsc59'],
  ['TypeScript 7 (what npm i typescript installs)', 'typescript'],
] as const) {
  t.test(`${label}: the client type-checks against the server's services from another install`, async (t) => {
    const [command, prefix] = tscCommand(compiler)
    const version = await run(command, [...prefix, '--version'], { cwd: clientDir })
    t.comment(version.stdout.trim())
    const result = await run(command, [...prefix, '-p', 'tsconfig.json', '--pretty', 'false'], { cwd: clientDir, timeout: 300_000 })
    const errors = `${result.stdout}\n${result.stderr}`.split('\n').filter((line) => /error TS\d+/.test(line))
    t.same(errors, [], 'no error: typed calls pass, wrong calls are errors where @ts-expect-error says', { stdout: result.stdout.slice(0, 4000) })
    t.equal(result.code, 0, 'tsc exits 0', { stderr: result.stderr })
    // The two copies really are two: the server's services resolve fastify-actions from the server project.
    const files = await run(command, [...prefix, '-p', 'tsconfig.json', '--listFilesOnly'], { cwd: clientDir, timeout: 300_000 })
    const copies = new Set(files.stdout.split('\n').filter((f) => f.endsWith('/fastify-actions/dist/lib/action.d.ts')).map((f) => f.replace(/\/dist\/lib\/action\.d\.ts$/, '')))
    t.equal(copies.size, 2, `two copies of the declarations in one program: ${[...copies].join(', ')}`)
  })
}
