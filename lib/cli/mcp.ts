/**
 * `fastify-actions mcp`: the project's actions as MCP tools over stdio. Each JSON-RPC message read
 * from stdin is handed to the project's own MCP endpoint through `app.inject` (no port is opened),
 * so the tools, their names and the pipeline (auth, hooks, validation, rate limits) are the HTTP
 * endpoint's. stdout carries the protocol only.
 */
import { Writable, type Readable } from 'node:stream'
import type { Values } from './package.js'
import { buildProjectServer, importFromProject, openProject } from './project.js'

/** The environment variable whose JWT is sent with every message (protected actions). */
export const TOKEN_VARIABLE = 'FASTIFY_ACTIONS_TOKEN'

export type JsonRpcMessage = { jsonrpc: '2.0'; id?: string | number | null; method?: string; [key: string]: unknown }

/** The SDK's StdioServerTransport as used here (`onmessage` and `send` methods, so the SDK's narrower message type fits). */
export interface StdioTransport {
  onmessage?(message: JsonRpcMessage): void
  onerror?: (error: Error) => void
  onclose?: () => void
  start: () => Promise<void>
  send(message: JsonRpcMessage): Promise<void>
  close: () => Promise<void>
}

/** How the stdio serving reaches the project's MCP endpoint. */
export interface McpOverStdioOptions {
  /** The project's app: every message goes through `app.inject` (no port is opened). */
  app: { inject: (options: { method: 'POST'; url: string; headers: Record<string, string>; payload: string }) => PromiseLike<{ statusCode: number; body: string }> }
  /** The MCP endpoint's path (`{baseUrl}/mcp` unless `rest.mcp.path`). */
  path: string
  /** The JWT sent with every message (protected tools); none when undefined or empty. */
  token?: string
  /** The auth configuration's names: the token goes as `Bearer` in `headerName` and as the `cookieName` cookie. */
  auth?: { headerName?: string; cookieName?: string }
  /** Newline-delimited JSON-RPC in (the SDK's stdio framing) and out. */
  input: Readable
  output: Writable
  /** The SDK's `StdioServerTransport` (from '@modelcontextprotocol/sdk/server/stdio.js'). */
  StdioServerTransport: new (input: Readable, output: Writable) => StdioTransport
  /** Stops reading (the in-flight answers are still written), like the end of `input`. */
  signal?: AbortSignal
  /** Hears the HTTP status each message was answered with by the endpoint (the JSON-RPC answer carries none). */
  onForwarded?: (message: JsonRpcMessage, statusCode: number) => void
}

/**
 * The text the HTTP endpoint answers a body with: not JSON (`JSON.parse`'s SyntaxError), or JSON but not a
 * JSON-RPC message (the SDK's schema error); undefined for any other transport error (stdin's own).
 */
function parseErrorOf(error: Error): string | undefined {
  if (error instanceof SyntaxError) return 'Parse error: Invalid JSON'
  if (error.name === 'ZodError' || Array.isArray((error as { issues?: unknown }).issues)) return 'Parse error: Invalid JSON-RPC message'
  return undefined
}

/** The headers of every forwarded message: JSON, and the token (if any) as a `Bearer` header and as the auth cookie. */
export function forwardedHeaders(token: string | undefined, auth: McpOverStdioOptions['auth']): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  if (token) {
    headers[(auth?.headerName ?? 'authorization').toLowerCase()] = `Bearer ${token}`
    headers.cookie = `${auth?.cookieName ?? 'auth_token'}=${encodeURIComponent(token)}`
  }
  return headers
}

/**
 * Serves MCP over a pair of streams: each JSON-RPC message read from `input` is posted to `path` on
 * `app` through `app.inject`, its answer (if any) written to `output`. Settles when `input` ends, the
 * transport closes or `signal` aborts, after the answers in flight are written. Closes neither the app
 * nor the streams. Transport errors and failed forwards go to `console.error`.
 */
export async function serveMcpOverStdio(options: McpOverStdioOptions): Promise<void> {
  const { app, path, input, output, signal, onForwarded } = options
  const headers = forwardedHeaders(options.token, options.auth)
  const transport = new options.StdioServerTransport(input, output)

  /** One message through the HTTP endpoint; its answer (if any) back on `output`. */
  async function forward(message: JsonRpcMessage): Promise<void> {
    const response = await app.inject({ method: 'POST', url: path, headers, payload: JSON.stringify(message) })
    onForwarded?.(message, response.statusCode)
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
    if (signal?.aborted) return resolve()
    transport.onmessage = (message) => {
      const done = forward(message)
        .catch((error: unknown) => console.error(`[mcp] ${error instanceof Error ? error.message : String(error)}`))
        .finally(() => pending.delete(done))
      pending.add(done)
    }
    transport.onerror = (error) => {
      // A line that is not JSON, or not a JSON-RPC message: answered as the HTTP endpoint answers the
      // same body (the SDK's stdio transport only reports it), with no id to answer to.
      const parse = parseErrorOf(error)
      if (parse) {
        const done = transport.send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: parse } }).catch(() => undefined)
        pending.add(done)
        void done.finally(() => pending.delete(done))
      }
      console.error(`[mcp] ${error.message}`)
    }
    transport.onclose = resolve
    input.once('end', resolve)
    signal?.addEventListener('abort', () => resolve(), { once: true })
    void transport.start()
  })
  // Input ended: answer what is in flight, then close.
  await Promise.all(pending)
  await transport.close().catch(() => undefined)
}

export async function run(values: Values): Promise<void> {
  // stdout is the protocol's: the transport gets the real stream, every other writer (console, a
  // library's process.stdout.write) lands on stderr.
  const realWrite = process.stdout.write.bind(process.stdout) as (chunk: unknown, callback: (error?: Error | null) => void) => boolean
  const protocolOut = new Writable({ write: (chunk, _encoding, callback) => void realWrite(chunk, callback) })
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write
  const { root, config } = await openProject(values)
  const auth = config.auth as { headerName?: string; cookieName?: string } | undefined
  const { server, app, resolved } = await buildProjectServer(root, config, (rest) => ({ ...rest, mcp: { ...rest.mcp, enabled: true } }), { boot: true })
  // The path the server mounted (`rest.mcp.path`, else `{baseUrl}/mcp`, as it resolved them).
  const path = resolved.config.rest.mcp!.path

  const { StdioServerTransport } = await importFromProject<{ StdioServerTransport: McpOverStdioOptions['StdioServerTransport'] }>(root, '@modelcontextprotocol/sdk/server/stdio.js')
  const stop = new AbortController()
  const onSignal = () => stop.abort()
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  const serving = serveMcpOverStdio({ app, path, token: process.env[TOKEN_VARIABLE], auth, input: process.stdin, output: protocolOut, StdioServerTransport, signal: stop.signal })
  console.error(`MCP over stdio: ${path} of ${root}`)
  await serving
  await server.close()
  // The last answers are flushed before the process ends.
  await new Promise((resolve) => realWrite('', resolve))
}
