/**
 * `fastify-actions contract` and `diff` on a fixture project (test/helpers/contract-fixture.ts):
 * the snapshot, the report, the exit codes, `--json`, `--allow-breaking`, refusals.
 * `--against` a git ref: test/contract-git.test.ts; the example app: test/contract-example.test.ts.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { sortKeys } from '../lib/cli/schema-changes.js'
import { cli, fixtureProject, services } from './helpers/contract-fixture.js'

// Each command is a process that loads the project (a few seconds of CPU each, more on a busy machine).
t.setTimeout(600_000)

t.test('contract, then diff: the snapshot, the report, exit codes, --json, --allow-breaking', async (t) => {
  t.setTimeout(600_000)
  const dir = t.testdir(fixtureProject())

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

