/**
 * Issue 41 item 6: the MCP Inspector's CLI (@modelcontextprotocol/inspector 2.x, `--cli`), a client
 * nobody here wrote, lists the tools in `--strict` mode (it reports every tool-schema portability
 * problem and exits 6 on an error-severity one) and calls them: over HTTP against the example's
 * services, and over stdio against `fastify-actions mcp` in a project. No warning either way. The
 * Inspector is a dev dependency (its launcher runs without its postinstall).
 */
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import t from 'tap'
import { createServer } from '../lib/index.js'
import exampleConfig from '../example/contract.config.js'
import { echoService } from './helpers/fixtures.js'
import { startMcpServer } from './helpers/mcp.js'
import { mcpProject } from './helpers/mcp-project.js'

const repoRoot = resolve(import.meta.dirname, '..')
const inspector = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector/package.json')), 'clients', 'launcher', 'build', 'index.js')

function inspect(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [inspector, '--cli', ...args], { timeout: 120_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, NODE_OPTIONS: '' } }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr })
    })
  })
}

t.test('over HTTP: the example\'s tools pass --strict with no warning, and a call answers', async (t) => {
  const server = await createServer({ ...exampleConfig, rest: { ...exampleConfig.rest!, baseUrl: '/api', host: '127.0.0.1', port: 0 } })
  t.teardown(() => server.close())
  const url = `${await server.rest!.app.listen({ port: 0, host: '127.0.0.1' })}/api/mcp`
  const listed = await inspect([url, '--transport', 'http', '--strict', '--method', 'tools/list'])
  t.equal(listed.code, 0, 'exit 0')
  t.equal(listed.stderr.trim(), '', 'nothing reported on stderr: no portability warning or error')
  const names = (JSON.parse(listed.stdout) as { tools: { name: string }[] }).tools.map((tool) => tool.name)
  t.ok(names.includes('greetings_hello') && names.includes('greetings_wave'), `tools: ${names.join(', ')}`)
  const called = await inspect([url, '--transport', 'http', '--method', 'tools/call', '--tool-name', 'greetings_hello', '--tool-arg', 'name=Ada'])
  t.equal(called.code, 0)
  const result = JSON.parse(called.stdout) as { isError?: boolean; structuredContent?: unknown; content: { text: string }[] }
  t.notOk(result.isError)
  t.match(result.content[0]!.text, /Ada/)
})

t.test('over stdio: `fastify-actions mcp` passes --strict with no warning, and a streaming call answers', async (t) => {
  const dir = mcpProject(t)
  const command = [process.execPath, '--import', 'tsx', join(repoRoot, 'lib/cli/bin.ts'), 'mcp']
  const listed = await inspect(['--cwd', dir, '--strict', '--method', 'tools/list', ...command])
  t.equal(listed.code, 0, 'exit 0')
  // stderr carries the server's own start-up lines (stdio keeps stdout for the protocol): no report of the Inspector's.
  t.notMatch(listed.stderr, /Warning: tool|Error: tool|across \d+ tools?/, 'no portability warning or error', { stderr: listed.stderr })
  t.same((JSON.parse(listed.stdout) as { tools: { name: string }[] }).tools.map((tool) => tool.name).sort(), ['tasks_count', 'tasks_list'])
  const called = await inspect(['--cwd', dir, '--method', 'tools/call', '--tool-name', 'tasks_count', ...command])
  t.equal(called.code, 0)
  const result = JSON.parse(called.stdout) as { structuredContent?: unknown }
  t.same(result.structuredContent, { events: Array.from({ length: 13 }, (_, i) => ({ n: i + 1 })), final: { counted: 13 } })
})

t.test('over HTTP: exact answers of a call and of an Err', async (t) => {
  const server = await startMcpServer(t, { services: [echoService] })
  const list = await inspect([server.url.href, '--transport', 'http', '--method', 'tools/list'])
  t.equal(list.code, 0, list.stderr)
  t.same(
    (JSON.parse(list.stdout).tools as Array<{ name: string }>).map((tool) => tool.name),
    ['tasks_echo', 'tasks_fails', 'tasks_throws', 'tasks_list'],
  )
  const call = await inspect([server.url.href, '--transport', 'http', '--method', 'tools/call', '--tool-name', 'tasks_echo', '--tool-arg', 'title=hello', '--tool-arg', 'count=3'])
  t.equal(call.code, 0, call.stderr)
  t.same(JSON.parse(call.stdout), { content: [{ type: 'text', text: '{"title":"hello","count":3}' }] })
  const failed = await inspect([server.url.href, '--transport', 'http', '--method', 'tools/call', '--tool-name', 'tasks_fails'])
  t.match(JSON.parse(failed.stdout), { isError: true, content: [{ type: 'text', text: 'it failed' }] })
})
