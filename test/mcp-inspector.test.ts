import t from 'tap'
import { execFile } from 'node:child_process'
import { echoService } from './helpers/fixtures.js'
import { startMcpServer } from './helpers/mcp.js'

/** Runs the official MCP Inspector in CLI mode (fetched by npx from the npm registry, then cached). */
function inspector(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('npx', ['-y', '--prefer-offline', '@modelcontextprotocol/inspector', '--cli', ...args], { timeout: 180_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
      resolve({ code, stdout, stderr })
    })
  })
}

/** npm could not fetch or start the Inspector (no registry, no cache): a reason to skip, not a failure of ours. */
const cannotRun = /npm (ERR|error)|ENOTFOUND|EAI_AGAIN|ENOTCACHED|ECONNREFUSED.*registry|command not found|ETIMEDOUT/i

t.test('the official MCP Inspector (CLI mode) lists and calls the tools', async (t) => {
  if (process.env.MCP_INSPECTOR === '0') return t.plan(0, 'MCP_INSPECTOR=0')
  const server = await startMcpServer(t, { services: [echoService] })
  const list = await inspector([server.url.href, '--transport', 'http', '--method', 'tools/list'])
  if (list.code !== 0 && cannotRun.test(list.stderr)) return t.plan(0, `the Inspector cannot run here: ${list.stderr.trim().split('\n').at(-1)}`)
  t.equal(list.code, 0, list.stderr)
  const tools = JSON.parse(list.stdout).tools as Array<{ name: string; inputSchema: unknown }>
  t.same(
    tools.map((tool) => tool.name),
    ['tasks_echo', 'tasks_fails', 'tasks_throws', 'tasks_list'],
  )

  const call = await inspector([server.url.href, '--transport', 'http', '--method', 'tools/call', '--tool-name', 'tasks_echo', '--tool-arg', 'title=hello', '--tool-arg', 'count=3'])
  t.equal(call.code, 0, call.stderr)
  t.same(JSON.parse(call.stdout), { content: [{ type: 'text', text: '{"title":"hello","count":3}' }] })

  const failed = await inspector([server.url.href, '--transport', 'http', '--method', 'tools/call', '--tool-name', 'tasks_fails'])
  t.match(JSON.parse(failed.stdout), { isError: true, content: [{ type: 'text', text: 'it failed' }] })
})
