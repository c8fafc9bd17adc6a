/**
 * The CLI reads what the server resolved (issue 38): `fastify-actions list` prints the routes and
 * `fastify-actions mcp` serves the path the server mounted, for `rest.baseUrl` written `'api/'`,
 * `'/api'` or `''`. Before, both re-derived them from the raw config: `POST api//services/tasks/list`
 * and the MCP path `api//mcp` against the server's `/api/services/tasks/list` and `/api/mcp`.
 *
 * The fixture is a project whose own `fastify-actions` is this repository's source (through tsx) and
 * whose `tsx` is this repository's, so the CLI loads them as it loads a real project's.
 */
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { linkOwnSources } from './helpers/mcp-project.js'
import { cliAsProcess, sharedCliRunner } from './helpers/cli-runner.js'

const repoRoot = resolve(import.meta.dirname, '..')
const bin = join(repoRoot, 'lib/cli/bin.ts')

// Each command is a process that loads the project through tsx (seconds of CPU each on a busy machine).
t.setTimeout(600_000)

const ownVersion = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version

function fixture(t: Test, baseUrl: string, extra = '', actionRoutes = true): string {
  const dir = t.testdir({
    'package.json': JSON.stringify({ name: 'fixture', type: 'module', dependencies: { 'fastify-actions': '*' } }),
    src: {
      'config.ts': `import { createAction, createService, Ok } from 'fastify-actions'
const list = createAction({ name: 'list', description: 'Lists', handler: () => Ok({ items: [] }) })
const hidden = createAction({ name: 'hidden', description: 'Hidden', visibility: { rest: false }, handler: () => Ok({}) })
export default {
  serverName: 'fixture',
  services: [createService({ name: 'tasks', description: 'Tasks', actions: [list, hidden] })],
  rest: { baseUrl: ${JSON.stringify(baseUrl)}, allowedOrigins: [], openapi: { enabled: false, actionRoutes: ${actionRoutes} }${extra} },
}
`,
    },
  })
  return linkOwnSources(dir)
}

// `list`, `contract` and `--version` run in one runner process (test/helpers/cli-runner.ts: what
// bin.ts does with each command line); `mcp` and the first `list` run as processes of their own.
const cli = sharedCliRunner(t)
const cliReal = cliAsProcess

/** `fastify-actions mcp` with the given lines on stdin (then its end); its stdout lines and stderr. */
function mcp(cwd: string, lines: unknown[]): Promise<{ code: number | null; answers: Array<Record<string, any>>; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', bin, 'mcp'], { cwd, env: { ...process.env, NODE_OPTIONS: '' } })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('close', (code) => done({ code, answers: stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, any>), stderr }))
    child.stdin.end(lines.map((line) => JSON.stringify(line)).join('\n') + '\n')
  })
}

for (const [written, mounted] of [['api/', '/api'], ['/api', '/api'], ['', '']] as const) {
  t.test(`baseUrl ${JSON.stringify(written)}: list prints the routes the server mounts, mcp serves its path`, async (t) => {
    const dir = fixture(t, written)
    const list = await cli(['list'], dir)
    t.equal(list.code, 0, list.stderr)
    if (written === 'api/') t.same(await cliReal(['list'], dir), list, 'the same as a process of its own')
    const rows = list.stdout.trim().split('\n').slice(2).map((line) => line.trim().split(/\s{2,}/))
    t.same(rows, [
      ['tasks', 'list', 'no', 'no', 'no', `POST ${mounted}/services/tasks/list`],
      ['tasks', 'hidden', 'no', 'no', 'no', '-'],
    ])
    t.notMatch(list.stdout, /\/\//, 'no doubled slash')

    const served = await mcp(dir, [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'tasks_list', arguments: {} } },
    ])
    t.equal(served.code, 0, served.stderr)
    t.match(served.stderr, `MCP over stdio: ${mounted}/mcp of `, 'the path the server mounted')
    t.same(served.answers.map((answer) => answer.id), [1, 2])
    t.same(served.answers[1].result, { content: [{ type: 'text', text: '{"items":[]}' }] }, 'the tool answers through that path')
    t.equal(served.answers[0].result.serverInfo.version, ownVersion, "the MCP server's version: the same package lookup as the CLI's --version")

    const contract = await cli(['contract', '--out', '-'], dir)
    t.equal(contract.code, 0, contract.stderr)
    const snapshot = JSON.parse(contract.stdout)
    t.equal(snapshot.endpoint, `POST ${mounted}/services`, "the contract's endpoint: the server's")
    t.equal(snapshot.mcp, null, 'no MCP endpoint served')
    t.equal(snapshot.actions['tasks.list'].route, `POST ${mounted}/services/tasks/list`, 'the route the server mounts')
    t.equal(snapshot.actions['tasks.hidden'].route, null, 'hidden: no route')
    t.ok(snapshot.openapi.paths[`${mounted}/services/tasks/list`], 'the document, though the project does not serve it')
  })
}

t.test('contract reads the routes the server mounts: without per-action routes, the one endpoint; the MCP path as mounted', async (t) => {
  const dir = fixture(t, 'api/', ", mcp: { enabled: true, path: 'agents/mcp' }", false)
  const contract = await cli(['contract', '--out', '-'], dir)
  t.equal(contract.code, 0, contract.stderr)
  const snapshot = JSON.parse(contract.stdout)
  t.equal(snapshot.actions['tasks.list'].route, 'POST /api/services')
  t.equal(snapshot.mcp, '/agents/mcp')
  t.same(snapshot.tools.map((tool: { name: string }) => tool.name), ['tasks_list'])
  const extra = await cli(['list', 'more'], dir)
  t.equal(extra.code, 2, 'every command without arguments refuses one (the one preamble)')
  t.equal(extra.stderr, 'fastify-actions: unexpected argument "more" (see --help)\n')
  const version = await cli(['--version'], dir)
  t.equal(version.stdout, `${ownVersion}\n`)
})

t.test('rest.mcp.path written without its slash: the CLI serves the path the server mounted', async (t) => {
  const dir = fixture(t, 'api/', ", mcp: { path: 'agents/mcp' }")
  const served = await mcp(dir, [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }])
  t.equal(served.code, 0, served.stderr)
  t.match(served.stderr, 'MCP over stdio: /agents/mcp of ')
  t.same(served.answers[0].result.tools.map((tool: { name: string }) => tool.name), ['tasks_list'])
})
