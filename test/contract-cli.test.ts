/**
 * `fastify-actions contract` and `diff` on a fixture project (its own node_modules/fastify-actions
 * points at this repository's lib/): the snapshot, the report, the exit codes, `--json`,
 * `--allow-breaking`, and `--against` a git ref in a repository made for the test.
 */
import { execFile, execFileSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { sortKeys } from '../lib/cli/schema-changes.js'
import { repoRoot } from './helpers/pack.js'

const bin = join(repoRoot, 'lib', 'cli', 'bin.ts')

function cli(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', bin, ...args], { cwd, env: { ...process.env, NODE_OPTIONS: '' } }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr })
    })
  })
}

const config = `import { services } from './services.js'

export default {
  serverName: 'fixture',
  services,
  rest: { baseUrl: '/api', allowedOrigins: [], openapi: { enabled: true }, mcp: { enabled: true } },
}
`

/** Version 1 of the fixture's actions; version 2 narrows an input, adds an output field and a declared error, removes the action past its sunset. */
const services = (v2: boolean) => `import Type from 'typebox'
import { createAction, createService, Fail, Ok } from 'fastify-actions'

const create = createAction({
  name: 'create',
  description: 'Creates a task',
  validation: Type.Object({ title: Type.String({ maxLength: ${v2 ? 100 : 200} }) }),
  output: Type.Object({ id: Type.String(), title: Type.String()${v2 ? ', due: Type.String()' : ''} }),
  errors: { NOT_FOUND: { status: 404, data: Type.Object({ id: Type.String() }) }${v2 ? ', LOCKED: { status: 423 }' : ''} },
  handler: (data) => (data.title ? Ok({ id: '1', title: data.title${v2 ? ", due: ''" : ''} }) : Fail('NOT_FOUND', { id: '1' })),
})
const old = createAction({ name: 'old', description: 'The old way', deprecated: { since: '2020-01-01', sunset: '2020-06-01', replacement: 'tasks.create' }, handler: () => Ok({}) })
const watch = createAction({
  name: 'watch',
  description: 'Watches tasks',
  output: Type.Object({ n: Type.Integer() }),
  async *handler() {
    yield { n: 1 }
  },
})

export const services = [createService({ name: 'tasks', description: 'Tasks', actions: [create, ${v2 ? '' : 'old, '}watch] })]
`

t.test('contract, then diff: snapshot, report, exit codes, --json, --allow-breaking, --against a git ref', async (t) => {
  t.setTimeout(600_000)
  const dir = t.testdir({
    'package.json': JSON.stringify({ name: 'fixture', private: true, type: 'module', dependencies: { 'fastify-actions': '*' } }),
    node_modules: {
      'fastify-actions': {
        'package.json': JSON.stringify({ name: 'fastify-actions', type: 'module', exports: { '.': './index.js' } }),
        'index.js': `export * from ${JSON.stringify(pathToFileURL(join(repoRoot, 'lib', 'index.ts')).href)}\n`,
      },
    },
    src: { 'config.ts': config, 'services.ts': services(false) },
  })

  const missing = await cli(['diff'], dir)
  t.equal(missing.code, 2, 'no snapshot yet')
  t.equal(missing.stderr, 'fastify-actions: no snapshot at contract.json: run fastify-actions contract and commit it\n')
  const extra = await cli(['diff', 'main'], dir)
  t.equal(extra.code, 2)
  t.equal(extra.stderr, 'fastify-actions: unexpected argument "main" (see --help)\n')

  const written = await cli(['contract'], dir)
  t.equal(written.code, 0, written.stderr)
  t.match(written.stderr, 'Contract of 3 actions written to contract.json')
  const text = readFileSync(join(dir, 'contract.json'), 'utf8')
  const snapshot = JSON.parse(text)
  t.equal(text, JSON.stringify(sortKeys(snapshot), null, 2) + '\n', 'keys sorted, two-space JSON')
  t.same(Object.keys(snapshot.actions), ['tasks.create', 'tasks.old', 'tasks.watch'])
  const create = snapshot.actions['tasks.create']
  t.match(create, { route: 'POST /api/services/tasks/create', tool: 'tasks_create', auth: { protected: false }, input: { properties: { title: { maxLength: 200 } } }, output: { required: ['id', 'title'] }, events: null })
  t.equal(create.errors.NOT_FOUND.status, 404)
  t.match(snapshot.actions['tasks.watch'], { stream: true, output: null, events: { properties: { n: { type: 'integer' } } } })
  t.same(snapshot.actions['tasks.old'].deprecated, { since: '2020-01-01', sunset: '2020-06-01', replacement: 'tasks.create' })
  t.equal(snapshot.endpoint, 'POST /api/services')
  t.equal(snapshot.mcp, '/api/mcp')
  t.equal(snapshot.openapi.paths['/api/services/tasks/old'].post.deprecated, true, 'the OpenAPI document')
  t.same(snapshot.tools.map((tool: { name: string }) => tool.name), ['tasks_create', 'tasks_old', 'tasks_watch'], 'the MCP tool list')
  t.match(snapshot.tools[1].description, /^Deprecated since 2020-01-01/)

  const again = await cli(['contract', '--out', '-'], dir)
  t.equal(again.code, 0, again.stderr)
  t.equal(again.stdout, text, 'the same project gives the same bytes')

  const same = await cli(['diff'], dir)
  t.equal(same.code, 0, same.stderr)
  t.equal(same.stdout, 'No changes against contract.json.\n')

  writeFileSync(join(dir, 'src', 'services.ts'), services(true))
  const json = await cli(['diff', '--json'], dir)
  t.equal(json.code, 1, 'something breaks')
  const report = JSON.parse(json.stdout)
  t.equal(report.against, 'contract.json')
  t.equal(report.breaking, true)
  t.same(report.counts, { breaking: 1, expected: 1, additive: 2, cosmetic: 0 })
  const by = (where: string) => report.changes.find((change: { subject: string; where: string }) => change.where === where)
  t.match(by('input.title'), { class: 'breaking', subject: 'tasks.create', consumers: { client: 'breaking', rest: 'breaking', agents: 'breaking' } })
  t.match(by('output.due'), { class: 'additive' })
  t.match(by('errors.LOCKED'), { class: 'additive', note: /error union gains LOCKED/ })
  t.match(report.changes.find((change: { subject: string }) => change.subject === 'tasks.old'), { class: 'expected', what: 'removed after its sunset (2020-06-01)' })
  t.equal(json.stderr.trim().split('\n').pop(), 'fastify-actions: 1 breaking change against contract.json (--allow-breaking accepts them)')

  const human = await cli(['diff'], dir)
  t.equal(human.code, 1)
  const lines = human.stdout.split('\n')
  t.equal(lines[0], 'Changes against contract.json:')
  t.match(lines[2], /^CLASS\s+ACTION\s+WHERE\s+CONSUMERS\s+CHANGE$/)
  t.match(lines[4], /^BREAKING\s+tasks\.create\s+input\.title\s+client, REST, agents\s+maxLength 200 → 100 \(callers may be refused\)$/)
  t.match(human.stdout, /EXPECTED\s+tasks\.old\s+action\s+client, REST, agents\s+removed after its sunset \(2020-06-01\)/)
  t.match(human.stdout, '\n1 breaking, 1 expected, 2 additive, 0 cosmetic\n')

  const allowed = await cli(['diff', '--allow-breaking'], dir)
  t.equal(allowed.code, 0, 'accepted')

  // --against a git ref: v1's snapshot committed, v2's written over it.
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } })
  git('init', '-q', '-b', 'main')
  git('add', 'contract.json')
  git('commit', '-q', '-m', 'v1')
  const rewritten = await cli(['contract'], dir)
  t.equal(rewritten.code, 0, rewritten.stderr)
  const head = await cli(['diff', '--against', 'HEAD', '--json'], dir)
  t.equal(head.code, 1, head.stderr)
  t.equal(JSON.parse(head.stdout).against, 'HEAD:contract.json')
  t.equal(JSON.parse(head.stdout).counts.breaking, 1)
  const file = await cli(['diff', '--against', 'contract.json'], dir)
  t.equal(file.code, 0, 'a file named by --against: the new snapshot itself')
  const bad = await cli(['diff', '--against', 'v9.9.9'], dir)
  t.equal(bad.code, 2)
  t.match(bad.stderr, /^fastify-actions: --against v9\.9\.9: no such file, and git has no contract\.json at that ref/)
  t.ok(existsSync(join(dir, 'contract.json')))
})

t.test('diff refuses a snapshot that is not a contract (exit 2)', async (t) => {
  const dir = t.testdir({ 'package.json': JSON.stringify({ name: 'fixture', dependencies: { 'fastify-actions': '*' } }), 'contract.json': '{"openapi":"3.1.0"}', 'broken.json': '{' })
  const other = await cli(['diff'], dir)
  t.equal(other.code, 2)
  t.equal(other.stderr, 'fastify-actions: contract.json is not a fastify-actions contract (version 1): write it again with fastify-actions contract\n')
  const broken = await cli(['diff', '--against', 'broken.json'], dir)
  t.equal(broken.code, 2)
  t.equal(broken.stderr, 'fastify-actions: broken.json is not JSON: write it again with fastify-actions contract\n')
})

t.test("the example app against its own snapshot: nothing breaks (npm run contract:check)", async (t) => {
  t.setTimeout(240_000)
  const result = await cli(['diff', '--config', 'example/contract.config.ts', '--against', 'example/contract.json', '--json'], repoRoot)
  t.equal(result.code, 0, result.stderr + result.stdout.slice(0, 2000))
  const report = JSON.parse(result.stdout)
  t.equal(report.breaking, false)
  t.equal(report.against, 'example/contract.json')
})
