/**
 * The fastify-actions CLI, fast half: --help on every command, the refusals (message and exit
 * code), gen on a fixture project, names. The slow half (a scaffolded project installed from the
 * packed tarball) is test/package/scaffold.test.ts.
 */
import { execFile } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { commands, main, reportError } from '../lib/cli/index.js'
import { appendToArray } from '../lib/cli/gen.js'
import { applyAuthBlocks } from '../lib/cli/new.js'
import { checkName, toCamelCase } from '../lib/cli/names.js'
import { repoRoot } from './helpers/pack.js'

const bin = join(repoRoot, 'lib', 'cli', 'bin.ts')

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

/** The real executable (`node lib/cli/bin.ts`): its exit code and streams. Slow (a Node start with tsx each). */
function cli(args: string[], cwd = repoRoot): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', bin, ...args], { cwd, env: { ...process.env, NODE_OPTIONS: '' } }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr })
    })
  })
}

/**
 * What bin.ts does, in this process: `main(argv)` in `cwd`, exit 0 when it resolves, else
 * `reportError`'s code; stdout and stderr captured. The tests below that only read a command's
 * output and files use it (a CPU second each saved); the executable itself is run by `cli` above
 * for --help, --version, a usage error, a refusal and the commands that need a project.
 */
async function inProcess(args: string[], cwd = repoRoot): Promise<Run> {
  const out: string[] = []
  const err: string[] = []
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write }
  const capture = (into: string[]) => ((chunk: string | Uint8Array) => (into.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString()), true)) as typeof process.stdout.write
  const before = process.cwd()
  process.chdir(cwd)
  process.stdout.write = capture(out)
  process.stderr.write = capture(err)
  let code = 0
  try {
    await main(args)
  } catch (error) {
    code = reportError(error)
  } finally {
    process.stdout.write = writes.stdout
    process.stderr.write = writes.stderr
    process.chdir(before)
  }
  return { code, stdout: out.join(''), stderr: err.join('') }
}

t.test('--help lists every command; every command has its own --help', async (t) => {
  const main = await cli(['--help'])
  t.equal(main.code, 0)
  for (const name of Object.keys(commands)) t.match(main.stdout, new RegExp(`^  ${name} `, 'm'))
  for (const name of Object.keys(commands)) {
    const help = await inProcess([name, '--help'])
    t.equal(help.code, 0, `${name} --help`)
    t.match(help.stdout, `Usage: fastify-actions ${name}`)
  }
})

t.test('--version prints the package version', async (t) => {
  const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }
  const result = await cli(['--version'])
  t.equal(result.code, 0)
  t.equal(result.stdout, `${version}\n`)
})

t.test('usage errors: one line, exit 2', async (t) => {
  const cases: Array<[string[], string]> = [
    [['nope'], 'fastify-actions: unknown command "nope" (see --help)\n'],
    [['new'], 'fastify-actions: new needs a directory: fastify-actions new <dir> (see --help)\n'],
    [['new', 'a', '--bogus'], "fastify-actions: Unknown option '--bogus' (see --help)\n"],
    [['gen'], 'fastify-actions: gen needs what to generate: service or action (see --help)\n'],
    [['gen', 'thing', 'x'], 'fastify-actions: cannot generate "thing": use service or action (see --help)\n'],
    [['gen', 'action', 'tasks'], 'fastify-actions: gen action needs a service and a name: fastify-actions gen action <service> <name> (see --help)\n'],
  ]
  for (const [i, [args, stderr]] of cases.entries()) {
    // The first through the executable (its exit code 2), the others in this process.
    const result = await (i === 0 ? cli : inProcess)(args)
    t.equal(result.code, 2, args.join(' '))
    t.equal(result.stderr, stderr, args.join(' '))
  }
})

t.test('new refuses an existing non-empty directory and a bad project name (exit 1)', async (t) => {
  const dir = t.testdir({ taken: { 'file.txt': 'x' }, empty: {} })
  const taken = await cli(['new', 'taken', '--no-install'], dir)
  t.equal(taken.code, 1)
  t.equal(taken.stderr, 'fastify-actions: taken already exists and is not empty\n')
  const bad = await inProcess(['new', 'My App', '--no-install'], dir)
  t.equal(bad.code, 1)
  t.match(bad.stderr, /^fastify-actions: invalid project name "My App"/)
  t.notOk(existsSync(join(dir, 'My App')))
})

t.test('new --no-install writes the template, dotfiles renamed, auth blocks dropped', async (t) => {
  const dir = t.testdir({ empty: {} })
  const result = await inProcess(['new', 'empty', '--no-install', '--from', '^9.9.9'], dir)
  t.equal(result.code, 0, result.stderr)
  const root = join(dir, 'empty')
  for (const file of ['.gitignore', '.env.example', '.taprc', '.dockerignore', 'Dockerfile', 'compose.yaml', 'src/config.ts', 'src/server.ts', 'src/services/index.ts', 'src/services/tasks/delete.ts', 'src/db/migrations/0000_tasks.sql', 'test/tasks.test.ts']) {
    t.ok(existsSync(join(root, file)), file)
  }
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; dependencies: Record<string, string> }
  t.equal(manifest.name, 'empty')
  t.equal(manifest.dependencies['fastify-actions'], '^9.9.9')
  t.notMatch(readFileSync(join(root, 'src/config.ts'), 'utf8'), /auth|JWT/)
  t.notOk(existsSync(join(root, 'src/services/account')))
  t.match(readFileSync(join(root, 'README.md'), 'utf8'), /^npm install && npm start\nnpm test\n/)
})

t.test('new --auth adds the account service, its migration and test, and config.auth', async (t) => {
  const dir = t.testdir({})
  const result = await inProcess(['new', 'withauth', '--no-install', '--auth'], dir)
  t.equal(result.code, 0, result.stderr)
  const root = join(dir, 'withauth')
  t.ok(existsSync(join(root, 'src/services/account/login.ts')))
  t.ok(existsSync(join(root, 'src/db/migrations/0001_users.sql')))
  t.ok(existsSync(join(root, 'test/account.test.ts')))
  const config = readFileSync(join(root, 'src/config.ts'), 'utf8')
  t.match(config, /auth: \{ secret: env\.JWT_SECRET/)
  t.notMatch(config, /auth:(start|end)/)
  t.match(readFileSync(join(root, 'src/services/index.ts'), 'utf8'), /accountService,/)
})

t.test('commands that need a project refuse outside one (exit 1)', async (t) => {
  const dir = t.testdir({ 'package.json': '{"name":"other"}' })
  for (const args of [['gen', 'service', 'x'], ['list'], ['openapi'], ['mcp']]) {
    const result = await cli(args, dir)
    t.equal(result.code, 1, args.join(' '))
    t.equal(result.stderr, 'fastify-actions: not in a fastify-actions project: no package.json with fastify-actions as a dependency here or above\n')
  }
})

t.test('gen on a fixture project: files written and registered, refusals leave it unchanged', async (t) => {
  const dir = t.testdir({
    'package.json': JSON.stringify({ name: 'fixture', dependencies: { 'fastify-actions': '*' } }),
    src: { services: { 'index.ts': "import { createServices } from 'fastify-actions'\n\nexport const services = createServices([])\n" } },
    test: { 'helpers.ts': '' },
  })
  const service = await inProcess(['gen', 'service', 'user-profiles'], dir)
  t.equal(service.code, 0, service.stderr)
  t.equal(
    readFileSync(join(dir, 'src/services/index.ts'), 'utf8'),
    "import { createServices } from 'fastify-actions'\nimport { userProfilesService } from './user-profiles/index.js'\n\nexport const services = createServices([userProfilesService])\n",
  )
  t.match(readFileSync(join(dir, 'src/services/user-profiles/index.ts'), 'utf8'), "name: 'userProfiles'")
  t.ok(existsSync(join(dir, 'test/user-profiles.test.ts')))

  const action = await inProcess(['gen', 'action', 'user-profiles', 'send-invite'], dir)
  t.equal(action.code, 0, action.stderr)
  t.match(readFileSync(join(dir, 'src/services/user-profiles/send-invite.ts'), 'utf8'), "name: 'sendInvite'")
  t.match(readFileSync(join(dir, 'src/services/user-profiles/index.ts'), 'utf8'), 'actions: [helloAction, sendInviteAction]')
  t.match(readFileSync(join(dir, 'test/user-profiles.send-invite.test.ts'), 'utf8'), "call(app, 'userProfiles', 'sendInvite'")

  const before = readFileSync(join(dir, 'src/services/user-profiles/index.ts'), 'utf8')
  const refusals: Array<[string[], string]> = [
    [['gen', 'service', 'user-profiles'], 'fastify-actions: src/services/user-profiles already exists: nothing was changed\n'],
    [['gen', 'action', 'user-profiles', 'send-invite'], 'fastify-actions: src/services/user-profiles/send-invite.ts already exists: nothing was changed\n'],
    [['gen', 'action', 'missing', 'x'], 'fastify-actions: service "missing" not found: src/services/missing/index.ts does not exist\n'],
    [['gen', 'service', '9lives'], 'fastify-actions: invalid service name "9lives": use letters, digits and single hyphens, starting with a letter (e.g. user-profiles)\n'],
    [['gen', 'action', 'user-profiles', 'bad--name'], 'fastify-actions: invalid action name "bad--name": use letters, digits and single hyphens, starting with a letter (e.g. user-profiles)\n'],
    [['gen', 'action', 'user-profiles', 'x.y'], 'fastify-actions: invalid action name "x.y": use letters, digits and single hyphens, starting with a letter (e.g. user-profiles)\n'],
  ]
  for (const [args, stderr] of refusals) {
    const result = await inProcess(args, dir)
    t.equal(result.code, 1, args.join(' '))
    t.equal(result.stderr, stderr, args.join(' '))
  }
  t.equal(readFileSync(join(dir, 'src/services/user-profiles/index.ts'), 'utf8'), before)
})

t.test('gen refuses a folder without src/services/index.ts', async (t) => {
  const dir = t.testdir({ 'package.json': JSON.stringify({ name: 'bare', devDependencies: { 'fastify-actions': '*' } }) })
  mkdirSync(join(dir, 'src'))
  writeFileSync(join(dir, 'src', 'keep'), '')
  const result = await inProcess(['gen', 'service', 'x'], dir)
  t.equal(result.code, 1)
  t.equal(result.stderr, 'fastify-actions: src/services/index.ts not found: run gen in the root of a project made by fastify-actions new\n')
})

t.test('names: kebab-case becomes camelCase; bad names are refused', async (t) => {
  t.equal(toCamelCase('user-profiles'), 'userProfiles')
  t.equal(toCamelCase('a-b-c2'), 'aBC2')
  t.equal(checkName('action', 'markDone'), 'markDone')
  t.equal(checkName('action', 'delete'), 'delete')
  for (const bad of ['', '-x', 'x-', 'a b', 'a_b', '1a', 'é']) t.throws(() => checkName('service', bad), { name: 'CliError' }, bad)
})

t.test('appendToArray keeps the layout of one-line and multi-line arrays', async (t) => {
  t.equal(appendToArray('f([])', 'f([', 'a', 'x'), 'f([a])')
  t.equal(appendToArray('f([a])', 'f([', 'b', 'x'), 'f([a, b])')
  t.equal(appendToArray('f([\n  a,\n])', 'f([', 'b', 'x'), 'f([\n  a,\n  b,\n])')
  t.equal(appendToArray('f([\n  a\n])', 'f([', 'b', 'x'), 'f([\n  a,\n  b,\n])')
  t.throws(() => appendToArray('g()', 'f([', 'b', 'src/x.ts'), { message: 'cannot find "f([" in src/x.ts: add b there by hand' })
})

t.test('auth blocks are kept without their markers, or dropped', async (t) => {
  const text = 'a\n// auth:start\nb\n// auth:end\nc'
  t.equal(applyAuthBlocks(text, true), 'a\nb\nc')
  t.equal(applyAuthBlocks(text, false), 'a\nc')
})
