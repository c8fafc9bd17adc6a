import type { AddressInfo } from 'node:net'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport, type StreamableHTTPClientTransportOptions } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { buildServer, type TestConfig } from './server.js'

/** A subtest's `t` (only what these helpers use). */
interface Teardown {
  teardown: (fn: () => unknown) => void
}

/** A fresh server with the MCP endpoint on, listening on 127.0.0.1 (a free port). */
export async function startMcpServer(t: Teardown, overrides: TestConfig = {}) {
  const { rest, ...config } = overrides
  const server = await buildServer({ ...config, rest: { ...(rest || {}), mcp: { enabled: true, ...(rest ? rest.mcp : {}) } } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = server.app.server.address() as AddressInfo
  return Object.assign(server, { port, url: new URL(`http://127.0.0.1:${port}/api/mcp`) })
}

/** The SDK's own client, connected (initialize done) over Streamable HTTP. */
export async function connectClient(t: Teardown, url: URL, options: StreamableHTTPClientTransportOptions = {}): Promise<Client> {
  const client = new Client({ name: 'fastify-actions-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(url, options))
  t.teardown(() => client.close())
  return client
}

/** One JSON-RPC POST over raw HTTP, with the headers a Streamable HTTP client sends. */
export async function rawPost(url: URL, body: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  })
  const text = await response.text()
  let json: any
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json }
}

/** The text of a tool result's first content block. */
export function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? []
  return content[0]?.text ?? ''
}

/**
 * The progress notifications the MCP TypeScript SDK's client (1.32) reports through `onerror`
 * ("Received a progress notification for an unknown token") instead of the call's `onprogress`: it
 * handles a notification a microtask later than a response, so the ones read in the same chunk as the
 * result find the call's handler gone (docs/mcp.md). Sets `client.onerror`; the array fills with their
 * `progress` numbers as they come (after the result: wait a macrotask before reading it).
 */
export function lateProgress(client: Client): number[] {
  const late: number[] = []
  client.onerror = (error) => {
    const match = /^Received a progress notification for an unknown token: (.*)$/s.exec(error.message)
    if (match) late.push((JSON.parse(match[1]!) as { params: { progress: number } }).params.progress)
  }
  return late
}
