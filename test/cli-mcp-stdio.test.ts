import t from 'tap'
import { PassThrough } from 'node:stream'
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
  const serving = serveMcpOverStdio({ app: server.app, path: '/api/mcp', input, output })
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

/** Serves `lines` (each a string, or chunks of one) over in-memory streams; the answers written, parsed. */
async function serveLines(app: Parameters<typeof serveMcpOverStdio>[0]['app'], chunks: Array<string | Buffer>, options: { maxLineBytes?: number } = {}) {
  const input = new PassThrough()
  const output = new PassThrough()
  const written = new Promise<string>((resolve) => {
    let text = ''
    output.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve(text))
  })
  const serving = serveMcpOverStdio({ app, path: '/api/mcp', input, output, ...options })
  for (const chunk of chunks) if (!input.write(chunk)) await new Promise((resolve) => input.once('drain', resolve))
  input.end()
  await serving
  output.end()
  return (await written).split('\n').filter(Boolean).map((line: string) => JSON.parse(line))
}

t.test('a message nested 20,000 deep: the HTTP endpoint\'s refusal as a -32000 error, no stack overflow, the session goes on', async (t) => {
  const server = await buildServer({ rest: { mcp: { enabled: true } } })
  t.teardown(() => server.close())
  const deep = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tasks_echo","arguments":{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}}}`
  const overHttp = await server.app.inject({ method: 'POST', url: '/api/mcp', headers: mcpHeaders, payload: deep })
  t.equal(overHttp.statusCode, 400)
  t.same(overHttp.json(), { status: false, message: 'JSON body nested deeper than 64 levels', data: { maxDepth: 64 } })
  const error = console.error
  console.error = () => undefined
  t.teardown(() => (console.error = error))
  const answers = await serveLines(server.app, [`${deep}\n`, `${JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'ping' })}\n`])
  t.same(answers, [
    { jsonrpc: '2.0', id: 3, error: { code: -32000, message: 'JSON body nested deeper than 64 levels', data: { maxDepth: 64 } } },
    { jsonrpc: '2.0', id: 4, result: {} },
  ])
})

t.test('a line over the limit (11 MiB, in pieces): refused with a JSON-RPC error, never held whole, the session goes on', async (t) => {
  const server = await buildServer({ rest: { mcp: { enabled: true } } })
  t.teardown(() => server.close())
  const errors: unknown[] = []
  const error = console.error
  console.error = (...args: unknown[]) => void errors.push(args)
  t.teardown(() => (console.error = error))
  const piece = Buffer.alloc(1024 * 1024, 'x')
  const long = [Buffer.from('{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":"'), ...Array.from({ length: 11 }, () => piece), Buffer.from('"}}\n')]
  const next = `${JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/list' })}\n`
  const answers = await serveLines(server.app, [...long, next])
  t.equal(answers.length, 2)
  answers.sort((a, b) => String(a.id).localeCompare(String(b.id)))
  t.same(answers[1], { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Request body too large' } }, "the HTTP endpoint's 413 message")
  t.equal(answers[0].id, 6)
  t.ok(Array.isArray(answers[0].result.tools), 'the next message is answered')
  t.match(String(errors[0]), /a line over 1048576 bytes was refused/)

  // The limit is the endpoint's body limit (the CLI passes `rest.bodyLimit`): a line just within it is served.
  const small = await serveLines(server.app, [`${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping', params: { pad: 'y'.repeat(100) } })}\n`, `${JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'ping', params: { pad: 'y'.repeat(200) } })}\r\n`], { maxLineBytes: 200 })
  // Answers go out as they are ready (JSON-RPC pairs them by id): the refusal needs no round trip.
  t.same(small.sort((a, b) => String(a.id).localeCompare(String(b.id))), [
    { jsonrpc: '2.0', id: 7, result: {} },
    { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Request body too large' } },
  ])
})
