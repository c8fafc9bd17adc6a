import t from 'tap'
import { PassThrough } from 'node:stream'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { serveMcpOverStdio } from '../lib/cli/mcp.js'
import { buildServer } from './helpers/server.js'

// `fastify-actions mcp` (lib/cli/mcp.ts) over a pair of streams: a line that is not JSON, or JSON that
// is not a JSON-RPC message, gets the answer the HTTP endpoint gives the same body (-32700, id null),
// and the session goes on.

const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }

t.test('bad lines: the HTTP endpoint\'s parse errors, then the next message is served', async (t) => {
  const server = await buildServer({ rest: { mcp: { enabled: true } } })
  t.teardown(() => server.close())
  const bad = ['this is not json', '{"foo":1}']

  // What the HTTP endpoint answers the same bodies.
  const overHttp = []
  for (const body of bad) {
    const response = await server.app.inject({ method: 'POST', url: '/api/mcp', headers: mcpHeaders, payload: body })
    overHttp.push({ status: response.statusCode, body: response.json() })
  }
  t.same(overHttp.map((answer) => answer.status), [400, 400])

  const input = new PassThrough()
  const output = new PassThrough()
  const errors: unknown[] = []
  const error = console.error
  console.error = (...args: unknown[]) => void errors.push(args)
  t.teardown(() => (console.error = error))
  // Everything written to `output`, once it ended (a write the transport made may still be on its way
  // through the PassThrough when the serving settles).
  const written = new Promise<string>((resolve) => {
    let text = ''
    output.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve(text))
  })
  const serving = serveMcpOverStdio({ app: server.app, path: '/api/mcp', input, output, StdioServerTransport })
  input.end(`${bad.join('\n')}\n${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' })}\n`)
  await serving
  output.end()
  const lines = (await written).split('\n').filter(Boolean).map((line: string) => JSON.parse(line))
  t.equal(lines.length, 3)
  t.same(lines.slice(0, 2), overHttp.map((answer) => ({ jsonrpc: '2.0', id: null, error: { code: answer.body.error.code, message: answer.body.error.message } })))
  t.same(lines.slice(0, 2).map((line: { error: { code: number; message: string } }) => [line.error.code, line.error.message]), [
    [-32700, 'Parse error: Invalid JSON'],
    [-32700, 'Parse error: Invalid JSON-RPC message'],
  ])
  t.equal(lines[2].id, 7)
  t.ok(Array.isArray(lines[2].result.tools), 'the session goes on: tools/list answered')
  t.equal(errors.length, 2, 'each bad line is also reported on stderr')
})
