/**
 * The typed client across two installs of the package, shared by test/package/two-installs-*.test.ts
 * (one file per compiler): a server project (the packed tarball and its peers) exports its
 * `services`; a front end with its OWN install of the same tarball (`npm install <tarball>` only:
 * typebox comes as the required peer, fastify and drizzle-orm are optional peers and stay out)
 * imports that type and calls `createClient<typeof services>`. Two copies of the declarations are
 * two `ServerContext` classes to TypeScript: the client's constraint must be structural.
 *
 * The front end is compiled under the three resolutions front ends use (NodeNext, Node16, Bundler:
 * Vite, Next, esbuild) with `skipLibCheck: false`: one tsconfig per resolution, all three built by
 * one compiler process (`tsc -b`), so each compiler starts once; the builds are incremental, kept
 * with the packed install (per source state), so a second run rechecks only what changed.
 */
import { existsSync } from 'node:fs'
import { mkdir, readFile, rename, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Test } from 'tap'
import { frontendInstall, packAndInstall, repoRoot, run, type FrontendInstall, type PackedInstall } from './pack.js'

export const serverServices = `import Type from 'typebox'
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

export const clientProgram = `import { createClient, type ClientResult } from 'fastify-actions/client'
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

/** The three resolutions a front end uses: NodeNext and Node16 (Node's own), Bundler (Vite, Next, esbuild). */
export const resolutions = {
  NodeNext: { module: 'NodeNext', moduleResolution: 'NodeNext' },
  Node16: { module: 'Node16', moduleResolution: 'Node16' },
  Bundler: { module: 'ESNext', moduleResolution: 'Bundler' },
} as const

export type Resolution = keyof typeof resolutions

function tsconfig(resolution: Resolution) {
  return {
    compilerOptions: {
      target: 'ES2022',
      ...resolutions[resolution],
      lib: ['ES2023', 'DOM', 'DOM.Iterable'],
      types: [],
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      // Build mode records each project's outcome in its .tsbuildinfo: `--dry` reads it back per
      // resolution, and a second run on the same packed sources rechecks only what changed.
      incremental: true,
      tsBuildInfoFile: `.build/${resolution}.tsbuildinfo`,
    },
    // The server's sources are roots too, so build mode's up-to-date check sees them change.
    files: ['client.ts', '../server/services.ts'],
  }
}

/**
 * Writes a file whole or not at all (two test files may write the same server sources at once), and
 * only when its text changes (an unchanged file keeps its time, so the incremental build reuses it).
 */
async function writeAtomic(path: string, text: string): Promise<void> {
  if ((await readFile(path, 'utf8').catch(() => undefined)) === text) return
  const temp = `${path}.${process.pid}.tmp`
  await writeFile(temp, text)
  await rename(temp, path)
}

export interface Frontend {
  packed: PackedInstall
  install: FrontendInstall
  /** The client's sources, one tsconfig per resolution, the front end's node_modules linked in. */
  clientDir: string
}

/** The server project's services and a client folder of the compiler's own beside them. */
export async function prepareFrontend(name: string): Promise<Frontend> {
  const packed = await packAndInstall()
  const install = await frontendInstall()
  const serverDir = join(packed.project, 'server')
  await mkdir(serverDir, { recursive: true })
  await writeAtomic(join(serverDir, 'services.ts'), serverServices)
  // The client's sources sit beside the server's (../server/services.js), with the front end's node_modules.
  const clientDir = join(packed.project, `client-${name}`)
  await mkdir(clientDir, { recursive: true })
  if (!existsSync(join(clientDir, 'node_modules'))) await symlink(join(install.project, 'node_modules'), join(clientDir, 'node_modules'), 'dir')
  await writeAtomic(join(clientDir, 'package.json'), JSON.stringify({ name: 'client-app', private: true, type: 'module' }))
  await writeAtomic(join(clientDir, 'client.ts'), clientProgram)
  for (const resolution of Object.keys(resolutions) as Resolution[]) {
    await writeAtomic(join(clientDir, `tsconfig.${resolution}.json`), JSON.stringify(tsconfig(resolution), null, 2))
  }
  return { packed, install, clientDir }
}

/**
 * The compilers, from the repository's own node_modules: TypeScript 5.9 (the `typescript` the project
 * pins) and TypeScript 7, the native compiler (`@typescript/native-preview`'s `tsgo`, run as its
 * executable: its JavaScript launcher is an ES module that a test runner's hooks trip over).
 */
export const compilers = {
  ts5: { label: 'TypeScript 5.9', command: process.execPath, prefix: [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc')], flags: [] as string[] },
  // One checker: tsgo's parallel checkers each instantiate the same heavy types (TypeBox's), about
  // a third more CPU for the same verdict on a machine whose cores the other test files use anyway.
  ts7: { label: 'TypeScript 7 (tsgo)', command: join(repoRoot, 'node_modules', '@typescript', `native-preview-${process.platform}-${process.arch}`, 'lib', 'tsgo'), prefix: [] as string[], flags: ['--singleThreaded'] },
} as const

/**
 * Type-checks the client under every resolution in one compiler process (`-b` with the three
 * tsconfigs), then reads each project's outcome back with `-b --verbose --dry`: a project whose
 * program has errors is "out of date ... needs to report errors", a passing one "up to date".
 */
export async function checkResolutions(t: Test, compiler: keyof typeof compilers): Promise<void> {
  const { label, command, prefix, flags } = compilers[compiler]
  t.ok(existsSync(command), `${label} is installed`)
  const { clientDir } = await prepareFrontend(compiler)
  const version = await run(command, [...prefix, '--version'], { cwd: clientDir })
  t.comment(`${label}: ${version.stdout.trim()}`)
  const names = Object.keys(resolutions) as Resolution[]
  const configs = names.map((name) => `tsconfig.${name}.json`)
  const result = await run(command, [...prefix, '-b', ...configs, '--pretty', 'false', ...flags], { cwd: clientDir, timeout: 1_500_000 })
  const errors = `${result.stdout}\n${result.stderr}`.split('\n').filter((line) => /error TS\d+/.test(line))
  t.same(errors, [], `${label}: no error under ${names.join(', ')}: typed calls pass, wrong calls are errors where @ts-expect-error says`, { stdout: result.stdout.slice(0, 4000) })
  t.equal(result.code, 0, `${label} exits 0`, { stderr: result.stderr })
  const dry = await run(command, [...prefix, '-b', '--verbose', '--dry', ...configs], { cwd: clientDir })
  for (const name of names) {
    t.match(dry.stdout, new RegExp(`Project '[^']*tsconfig\\.${name}\\.json' is up to date`), `${label}, ${name} resolution: the project type-checks`, { stdout: dry.stdout })
  }
  // The two copies really are two: the server's services resolve fastify-actions from the server project.
  const files = await run(command, [...prefix, '-p', 'tsconfig.NodeNext.json', '--listFilesOnly', ...flags], { cwd: clientDir, timeout: 300_000 })
  const copies = new Set(files.stdout.split('\n').filter((f) => f.endsWith('/fastify-actions/dist/lib/action.d.ts')).map((f) => f.replace(/\/dist\/lib\/action\.d\.ts$/, '')))
  t.equal(copies.size, 2, `two copies of the declarations in one program: ${[...copies].join(', ')}`)
}
