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
import { execFile, spawn } from 'node:child_process'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

const repoRoot = resolve(import.meta.dirname, '..')
const bin = join(repoRoot, 'lib/cli/bin.ts')

function fixture(t: Test, baseUrl: string, extra = ''): string {
  const dir = t.testdir({
    'package.json': JSON.stringify({ name: 'fixture', type: 'module', dependencies: { 'fastify-actions': '*' } }),
    src: {
      'config.ts': `import { createAction, createService, Ok } from 'fastify-actions'
const list = createAction({ name: 'list', description: 'Lists', handler: () => Ok({ items: [] }) })
const hidden = createAction({ name: 'hidden', description: 'Hidden', visibility: { rest: false }, handler: () => Ok({}) })
export default {
  serverName: 'fixture',
  services: [createService({ name: 'tasks', description: 'Tasks', actions: [list, hidden] })],
  rest: { baseUrl: ${JSON.stringify(baseUrl)}, allowedOrigins: [], openapi: { enabled: false, actionRoutes: true }${extra} },
}
`,
    },
  })
  const modules = join(dir, 'node_modules')
  mkdirSync(join(modules, 'fastify-actions'), { recursive: true })
  writeFileSync(join(modules, 'fastify-actions', 'package.json'), JSON.stringify({ name: 'fastify-actions', type: 'module', exports: { '.': './index.ts' } }))
  writeFileSync(join(modules, 'fastify-actions', 'index.ts'), `export * from ${JSON.stringify(join(repoRoot, 'lib/index.ts'))}\n`)
  symlinkSync(join(repoRoot, 'node_modules', 'tsx'), join(modules, 'tsx'))
  return dir
}

function cli(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, ['--import', 'tsx', bin, ...args], { cwd, env: { ...process.env, NODE_OPTIONS: '' } }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr })
    })
  })
}

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
  })
}

t.test('rest.mcp.path written without its slash: the CLI serves the path the server mounted', async (t) => {
  const dir = fixture(t, 'api/', ", mcp: { path: 'agents/mcp' }")
  const served = await mcp(dir, [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }])
  t.equal(served.code, 0, served.stderr)
  t.match(served.stderr, 'MCP over stdio: /agents/mcp of ')
  t.same(served.answers[0].result.tools.map((tool: { name: string }) => tool.name), ['tasks_list'])
})
