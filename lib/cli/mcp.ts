/**
 * `fastify-actions mcp`: the project's actions as MCP tools over stdio. Each JSON-RPC message read
 * from stdin is handed to the project's own MCP endpoint through `app.inject` (no port is opened),
 * so the tools, their names and the pipeline (auth, hooks, validation, rate limits) are the HTTP
 * endpoint's. stdout carries the protocol only.
 */
import { Writable } from 'node:stream'
import { consoleToStderr } from './console.js'
import type { Values } from './package.js'
import { buildProjectServer, findProjectRoot, importFromProject, loadConfig } from './project.js'

/** The environment variable whose JWT is sent with every message (protected actions). */
export const TOKEN_VARIABLE = 'FASTIFY_ACTIONS_TOKEN'

type JsonRpcMessage = { jsonrpc: '2.0'; id?: string | number | null; method?: string; [key: string]: unknown }

interface StdioTransport {
  onmessage?: (message: JsonRpcMessage) => void
  onerror?: (error: Error) => void
  onclose?: () => void
  start: () => Promise<void>
  send: (message: JsonRpcMessage) => Promise<void>
  close: () => Promise<void>
}

export async function run(values: Values): Promise<void> {
  // stdout is the protocol's: the transport gets the real stream, every other writer (console, a
  // library's process.stdout.write) lands on stderr.
  const realWrite = process.stdout.write.bind(process.stdout) as (chunk: unknown, callback: (error?: Error | null) => void) => boolean
  const protocolOut = new Writable({ write: (chunk, _encoding, callback) => void realWrite(chunk, callback) })
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write
  consoleToStderr()
  const root = findProjectRoot()
  const config = await loadConfig(root, values.config as string | undefined)
  const auth = config.auth as { headerName?: string; cookieName?: string } | undefined
  const { server, app } = await buildProjectServer(root, config, (rest) => ({ ...rest, mcp: { ...rest.mcp, enabled: true } }), { boot: true })
  const rest = (config.rest ?? {}) as Record<string, any>
  const path = typeof rest.mcp?.path === 'string' ? (rest.mcp.path.startsWith('/') ? rest.mcp.path : `/${rest.mcp.path}`) : `${rest.baseUrl ?? ''}/mcp`

  const token = process.env[TOKEN_VARIABLE]
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  if (token) {
    headers[(auth?.headerName ?? 'authorization').toLowerCase()] = `Bearer ${token}`
    headers.cookie = `${auth?.cookieName ?? 'auth_token'}=${encodeURIComponent(token)}`
  }

  const { StdioServerTransport } = await importFromProject<{ StdioServerTransport: new (stdin: NodeJS.ReadableStream, stdout: NodeJS.WritableStream) => StdioTransport }>(root, '@modelcontextprotocol/sdk/server/stdio.js')
  const transport = new StdioServerTransport(process.stdin, protocolOut)

  /** One message through the HTTP endpoint; its answer (if any) back on stdout. */
  async function forward(message: JsonRpcMessage): Promise<void> {
    const response = await app.inject({ method: 'POST', url: path, headers, payload: JSON.stringify(message) })
    if (message.id === undefined || message.id === null) return // a notification: 202, nothing to answer
    let answer: JsonRpcMessage | undefined
    try {
      const body = JSON.parse(response.body) as JsonRpcMessage
      if (body && body.jsonrpc === '2.0') answer = body
      else answer = { jsonrpc: '2.0', id: message.id, error: { code: -32000, message: String((body as { message?: unknown }).message ?? `HTTP ${response.statusCode}`) } }
    } catch {
      answer = { jsonrpc: '2.0', id: message.id, error: { code: -32603, message: `HTTP ${response.statusCode}` } }
    }
    await transport.send(answer)
  }

  const pending = new Set<Promise<void>>()
  await new Promise<void>((resolve) => {
    transport.onmessage = (message) => {
      const done = forward(message)
        .catch((error: unknown) => console.error(`[mcp] ${error instanceof Error ? error.message : String(error)}`))
        .finally(() => pending.delete(done))
      pending.add(done)
    }
    transport.onerror = (error) => console.error(`[mcp] ${error.message}`)
    transport.onclose = resolve
    process.stdin.once('end', resolve)
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
    void transport.start()
    console.error(`MCP over stdio: ${path} of ${root}`)
  })
  // stdin ended: answer what is in flight, then close.
  await Promise.all(pending)
  await transport.close().catch(() => undefined)
  await server.close()
  // The last answers are flushed before the process ends.
  await new Promise((resolve) => realWrite('', resolve))
}
