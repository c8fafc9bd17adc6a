/**
 * `fastify-actions mcp` as a process, with the MCP SDK's own client (StdioClientTransport) spawning
 * the CLI on a fixture project (the fixture of test/cli-resolved.test.ts: its own `fastify-actions`
 * is this repository's source, its `tsx` this repository's): progress of a streaming tool arrives
 * as over HTTP (issue 39 item 6), and the client going away (closed stdin, EPIPE) ends the process
 * with exit 0 and no stack trace (item 7).
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js'
import { mcpProject as fixture } from './helpers/mcp-project.js'
import { lateProgress } from './helpers/mcp.js'

const repoRoot = resolve(import.meta.dirname, '..')
const bin = join(repoRoot, 'lib/cli/bin.ts')
/** The CLI starts through tsx from source here: generous, never a measure of speed. */
const slow = { timeout: 120_000 }

// The MCP TypeScript SDK's client (1.32) handles a notification a microtask later than a response: a
// progress notification read in the same chunk as the result finds the call's handler gone and goes to
// `onerror` (test/mcp-remote.test.ts, docs/mcp.md). How many share that read depends on the machine's
// load, so the test counts both: every event reaches the client, in order, and the result holds all.
t.test('the SDK client over stdio: a streaming tool with onprogress gets every event, as progress or (read with the result) reported late, then the result', async (t) => {
  const dir = fixture(t)
  const transport = new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', bin, 'mcp'], cwd: dir, env: { ...(process.env as Record<string, string>), NODE_OPTIONS: '' }, stderr: 'pipe' })
  let stderr = ''
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const client = new Client({ name: 'stdio-progress-test', version: '1.0.0' })
  const late = lateProgress(client)
  await client.connect(transport, slow)
  t.teardown(() => client.close())
  const progress: Progress[] = []
  const result = await client.callTool({ name: 'tasks_count', arguments: {} }, CallToolResultSchema, { ...slow, onprogress: (update) => progress.push(update) })
  // A late notification is reported after the result: its microtask runs once the response is handled.
  await new Promise((resolve) => setImmediate(resolve))
  const events = Array.from({ length: 13 }, (_, i) => ({ n: i + 1 }))
  const handled = progress.map((update) => update.progress)
  t.same([...handled, ...late], events.map((_, i) => i + 1), `all 13 progress notifications reach the client, in order (${late.length} reported late)`)
  t.same(late, events.slice(handled.length).map((_, i) => handled.length + i + 1), 'the late ones are the last, read with the result')
  t.same(progress, events.slice(0, handled.length).map((event, i) => ({ progress: i + 1, message: JSON.stringify(event) })), 'each handled one carries its event')
  t.same(result.structuredContent, { events, final: { counted: 13 } })
  t.notOk(result.isError)
  // The same client goes on: a plain call after the streamed one.
  const plain = await client.callTool({ name: 'tasks_list', arguments: {} }, undefined, slow)
  t.same(plain.structuredContent ?? JSON.parse((plain.content as Array<{ text: string }>)[0]!.text), { items: [] })
  t.notMatch(stderr, /Error|at .*\(/, 'nothing went wrong on stderr', { stderr })
})

/** The CLI spawned with pipes of our own; its exit code and stderr once it is gone. */
function spawnMcp(dir: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', bin, 'mcp'], { cwd: dir, env: { ...process.env, NODE_OPTIONS: '' } })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exited = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as string | null, stderr }))
  return { child, exited }
}

/** The first line the child writes on stdout (an answer): the CLI is up. */
function firstLine(child: ReturnType<typeof spawn>): Promise<string> {
  return new Promise((resolve) => {
    let text = ''
    const onData = (chunk: Buffer) => {
      text += chunk.toString()
      const newline = text.indexOf('\n')
      if (newline === -1) return
      child.stdout!.off('data', onData)
      resolve(text.slice(0, newline))
    }
    child.stdout!.on('data', onData)
  })
}

const ping = (id: number) => `${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}\n`

t.test('the client closes stdin: the process ends with exit 0, no stack trace', async (t) => {
  const { child, exited } = spawnMcp(fixture(t))
  const line = firstLine(child)
  child.stdin.write(ping(1))
  t.same(JSON.parse(await line), { jsonrpc: '2.0', id: 1, result: {} })
  child.stdin.end()
  const { code, signal, stderr } = await exited
  t.equal(code, 0, stderr)
  t.equal(signal, null)
  t.notMatch(stderr, /Error|\n\s+at /, 'no error, no stack trace', { stderr })
})

t.test('the client stops reading (EPIPE on stdout, stdin still open): exit 0, no stack trace', async (t) => {
  const { child, exited } = spawnMcp(fixture(t))
  const line = firstLine(child)
  child.stdin.write(ping(1))
  await line
  // The reading end of the CLI's stdout goes away; the next answers cannot be written.
  child.stdout.destroy()
  for (let id = 2; id <= 4; id++) child.stdin.write(ping(id))
  const { code, signal, stderr } = await exited
  t.equal(code, 0, stderr)
  t.equal(signal, null)
  t.notMatch(stderr, /Error|\n\s+at /, 'no error, no stack trace', { stderr })
  child.stdin.destroy()
})

t.test('the handshake is answered while onBoot (migrations) runs; a tool call waits for it', async (t) => {
  // onBoot finishes once the test writes the gate file: an order of events, no clock.
  const dir = fixture(t, `\n  onBoot: { maxWaitTime: 120_000, fn: () => new Promise<void>((resolve) => { const poll = setInterval(() => { if (existsSync('gate')) { clearInterval(poll); resolve() } }, 20) }) },`)
  writeFileSync(join(dir, 'src', 'config.ts'), `import { existsSync } from 'node:fs'\n${readFileSync(join(dir, 'src', 'config.ts'), 'utf8')}`)
  const { child, exited } = spawnMcp(dir)
  const answers: Array<Record<string, any>> = []
  let text = ''
  let onAnswer: (() => void) | undefined
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n')) {
      answers.push(JSON.parse(text.slice(0, newline)))
      text = text.slice(newline + 1)
      onAnswer?.()
    }
  })
  const answered = (count: number) => new Promise<void>((resolve) => (onAnswer = () => answers.length >= count && resolve()))
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }
  const two = answered(2)
  child.stdin.write(`${JSON.stringify(init)}\n${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'tasks_list', arguments: {} } })}\n${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' })}\n`)
  await two
  t.same(answers.map((answer) => answer.id).sort(), [1, 3], 'initialize and tools/list answered before onBoot finished; the call waits')
  const three = answered(3)
  writeFileSync(join(dir, 'gate'), '')
  await three
  t.equal(answers[2]!.id, 2, 'the call is answered once onBoot has finished')
  t.same(answers[2]!.result.content, [{ type: 'text', text: '{"items":[]}' }])
  child.stdin.end()
  const { code, stderr } = await exited
  t.equal(code, 0, stderr)
})
