/**
 * mcp-remote (the stdio <-> Streamable HTTP bridge docs/mcp.md configures for Claude Desktop) between
 * the MCP SDK's stdio client and the HTTP MCP endpoint: a streaming tool's events all arrive as
 * progress notifications, then the result. Issue 41 counted 12 of 13 through mcp-remote: the 13th
 * does reach the client, and is dropped there (so may the 12th and 11th, when they share its read). The MCP TypeScript SDK's client (1.32) runs a
 * notification's handler in a microtask and a response's at once; when the last notification and the
 * result arrive in one read from stdio (mcp-remote writes them back to back), the result removes the
 * call's progress handler first, and the SDK reports the notification through `onerror` ("Received a
 * progress notification for an unknown token"). So: every notification arrives, handled or reported,
 * and the result holds every event.
 */
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js'
import t from 'tap'
import Type from 'typebox'
import { createAction, createService } from '../lib/index.js'
import { lateProgress, startMcpServer } from './helpers/mcp.js'
import { repoRoot } from './helpers/pack.js'

const count = createAction({
  name: 'count',
  description: 'Yields { n } from 1 to `to`, `gap` ms apart; returns how many',
  validation: Type.Object({ to: Type.Integer({ minimum: 1, maximum: 50 }), gap: Type.Integer({ minimum: 0, maximum: 100 }) }),
  handler: async function* (data) {
    for (let n = 1; n <= data.to; n++) {
      if (data.gap) await new Promise((resolve) => setTimeout(resolve, data.gap))
      yield { n }
    }
    return { counted: data.to }
  },
})
const services = [createService({ name: 'streams', description: 'Streams to count', actions: [count] })]

/** Generous: mcp-remote and the SDK start in a second or two; a loaded machine takes longer. */
const slow = { timeout: 120_000 }

t.test('through mcp-remote over stdio: every event as progress, the last one too, then the result', async (t) => {
  const server = await startMcpServer(t, { services })
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(repoRoot, 'node_modules', 'mcp-remote', 'dist', 'proxy.js'), server.url.href, '--allow-http', '--transport', 'http-only'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const client = new Client({ name: 'fastify-actions-test', version: '1.0.0' })
  const dropped = lateProgress(client)
  await client.connect(transport, slow)
  t.teardown(() => client.close())
  for (const gap of [0, 20]) {
    const progress: Progress[] = []
    dropped.length = 0
    const result = await client.callTool({ name: 'streams_count', arguments: { to: 13, gap } }, CallToolResultSchema, { ...slow, onprogress: (update) => progress.push(update) })
    // A late notification is reported after the result: its microtask runs once the response is handled.
    await new Promise((resolve) => setImmediate(resolve))
    const handled = progress.map((update) => update.progress)
    t.same([...handled, ...dropped], Array.from({ length: 13 }, (_, i) => i + 1), `gap ${gap} ms: 13 of 13 progress notifications reach the client, in order`, { stderr })
    t.same(dropped, Array.from({ length: 13 - handled.length }, (_, i) => handled.length + i + 1), `gap ${gap} ms: what the SDK reports late are the last ones, read with the result (${JSON.stringify(dropped)})`)
    t.same(progress.map((update) => update.message), handled.map((n) => JSON.stringify({ n })), 'each handled one carries its event')
    t.same(result.structuredContent, { events: Array.from({ length: 13 }, (_, i) => ({ n: i + 1 })), final: { counted: 13 } }, 'the result has every event')
  }
})
