/**
 * `fastify-actions diff --against <git ref>` in a git repository made for the test, around a fixture
 * project (test/helpers/contract-fixture.ts): the committed snapshot against the one written since.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { cli, fixtureProject, services } from './helpers/contract-fixture.js'

t.setTimeout(600_000)

t.test('--against HEAD reads the committed contract.json; a ref git does not have is exit 2', async (t) => {
  const dir = t.testdir(fixtureProject())
  const first = await cli(['contract'], dir)
  t.equal(first.code, 0, first.stderr)
  // v1's snapshot committed, v2's written over it.
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } })
  git('init', '-q', '-b', 'main')
  git('add', 'contract.json')
  git('commit', '-q', '-m', 'v1')
  writeFileSync(join(dir, 'src', 'services.ts'), services(true))
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
