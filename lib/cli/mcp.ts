/**
 * `fastify-actions mcp`: the project's actions as MCP tools over stdio. Each JSON-RPC message read
 * from stdin is handed to the project's own MCP endpoint through `app.inject` (no port is opened),
 * so the tools, their names and the pipeline (auth, hooks, validation, rate limits, the nesting and
 * size limits) are the HTTP endpoint's. stdout carries the protocol only.
 */
import { Writable, type Readable } from 'node:stream'
import type { Values } from './package.js'
import { buildProjectServer, openProject } from './project.js'

/** The environment variable whose JWT is sent with every message (protected actions). */
export const TOKEN_VARIABLE = 'FASTIFY_ACTIONS_TOKEN'

/** The longest line (one message) read when no `maxLineBytes` is given: the endpoint's default `rest.bodyLimit`. */
const DEFAULT_MAX_LINE = 1024 * 1024

/** JSON-RPC's implementation-defined server error: what a refusal of the HTTP endpoint (an envelope) becomes. */
const SERVER_ERROR = -32000

/** What is answered before the project's `onBoot` has finished: the handshake and the tool list need no data. */
const BEFORE_BOOT = /^(initialize|ping|tools\/list|notifications\/.*)$/

/** The message the HTTP endpoint answers a body over its limit with (413). */
const TOO_LARGE = 'Request body too large'

export type JsonRpcMessage = { jsonrpc: '2.0'; id?: string | number | null; method?: string; [key: string]: unknown }

/** What the bridge needs of an answer of `app.inject` with `payloadAsStream`: its status, headers and body as it is written. */
export interface StreamedResponse {
  statusCode: number
  headers: Record<string, unknown>
  stream: () => Readable
}

/** How the stdio serving reaches the project's MCP endpoint. */
export interface McpOverStdioOptions {
  /** The project's app: every message goes through `app.inject` (no port is opened), its answer read as it is written. */
  app: { inject: (options: { method: 'POST'; url: string; headers: Record<string, string>; payload: string; payloadAsStream: true }) => PromiseLike<StreamedResponse> }
  /** The MCP endpoint's path (`{baseUrl}/mcp` unless `rest.mcp.path`). */
  path: string
  /** The JWT sent with every message (protected tools); none when undefined or empty. */
  token?: string
  /** The auth configuration's names: the token goes as `Bearer` in `headerName` and as the `cookieName` cookie. */
  auth?: { headerName?: string; cookieName?: string }
  /** Newline-delimited JSON-RPC in (MCP's stdio framing) and out. */
  input: Readable
  output: Writable
  /** The longest line, in bytes (the endpoint's `rest.bodyLimit`): a longer one is refused, unread, and the session goes on. */
  maxLineBytes?: number
  /**
   * Settles once the project has booted (`onBoot`: its migrations): until then only what needs no
   * data is forwarded (`initialize`, `ping`, `tools/list`, notifications), the rest waits for it.
   */
  ready?: Promise<unknown>
  /** Stops reading (the in-flight answers are still written), like the end of `input`. */
  signal?: AbortSignal
  /** Hears the HTTP status each message was answered with by the endpoint (the JSON-RPC answer carries none). */
  onForwarded?: (message: JsonRpcMessage | undefined, statusCode: number) => void
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
 * The message a line holds, read at its top level only (its `id`): V8's `JSON.parse` keeps its own
 * stack, so no depth overflows it, and nothing here walks the value (the endpoint checks its depth).
 * Undefined for a line that is not a JSON object.
 */
function messageOf(line: string): JsonRpcMessage | undefined {
  try {
    const value = JSON.parse(line) as unknown
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonRpcMessage) : undefined
  } catch {
    return undefined
  }
}

/**
 * Splits `input` into lines of at most `max` bytes: each is handed to `onLine`; a longer one is never
 * kept whole (its bytes are dropped up to its newline) and `onTooLong` is called once for it.
 */
export function readLines(input: Readable, max: number, onLine: (line: string) => void, onTooLong: () => void): () => void {
  let parts: Buffer[] = []
  let size = 0
  let skipping = false
  const onData = (chunk: Buffer | string) => {
    let data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    for (let newline = data.indexOf(10); ; newline = data.indexOf(10)) {
      const part = newline === -1 ? data : data.subarray(0, newline)
      if (!skipping && size + part.length > max) {
        skipping = true
        parts = []
        size = 0
        onTooLong()
      }
      if (!skipping) {
        parts.push(part)
        size += part.length
      }
      if (newline === -1) return
      if (!skipping) {
        const line = Buffer.concat(parts, size).toString('utf8').replace(/\r$/, '')
        if (line.trim() !== '') onLine(line)
      }
      parts = []
      size = 0
      skipping = false
      data = data.subarray(newline + 1)
    }
  }
  input.on('data', onData)
  return () => void input.off('data', onData)
}

/**
 * The JSON-RPC messages of an SSE answer (the endpoint's answer to a call that asked for progress),
 * each handed to `onMessage` as it arrives: one per event, its `data` lines joined.
 */
async function readEvents(body: Readable, onMessage: (json: string) => Promise<void>): Promise<void> {
  let text = ''
  body.setEncoding('utf8')
  for await (const chunk of body as AsyncIterable<string>) {
    text += chunk
    for (let end = text.search(/\r?\n\r?\n/); end !== -1; end = text.search(/\r?\n\r?\n/)) {
      const block = text.slice(0, end)
      text = text.slice(end).replace(/^\r?\n\r?\n/, '')
      const data = block.split(/\r?\n/).filter((line) => line.startsWith('data:')).map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
      if (data.length > 0) await onMessage(data.join('\n'))
    }
  }
}

/** The whole body of a JSON answer. */
async function readText(body: Readable): Promise<string> {
  let text = ''
  body.setEncoding('utf8')
  for await (const chunk of body as AsyncIterable<string>) text += chunk
  return text
}

/**
 * The JSON-RPC answer of a JSON body: as written when it is a JSON-RPC message; a refusal of the HTTP
 * endpoint (an envelope: 401, 413, 429, a body nested too deep) becomes a -32000 error carrying its
 * message and data, as the HTTP client reads them. Undefined when there is nothing to answer.
 */
function answerOf(text: string, statusCode: number, id: JsonRpcMessage['id']): JsonRpcMessage | undefined {
  let body: { jsonrpc?: unknown; message?: unknown; data?: unknown } | undefined
  try {
    body = JSON.parse(text) as typeof body
  } catch {
    body = undefined
  }
  if (body?.jsonrpc === '2.0') return body as JsonRpcMessage
  if (id === undefined || id === null) return undefined // a notification is never answered
  const message = typeof body?.message === 'string' ? body.message : `HTTP ${statusCode}`
  const data = body?.data && typeof body.data === 'object' && Object.keys(body.data).length > 0 ? { data: body.data } : {}
  return { jsonrpc: '2.0', id, error: { code: SERVER_ERROR, message, ...data } }
}

/** Writes whole lines to `output`, waiting while it does not drain; a broken output rejects. */
function lineWriter(output: Writable) {
  return (json: string) =>
    new Promise<void>((resolve, reject) => {
      // JSON.stringify never writes a raw newline; an SSE `data` of several lines is made one again.
      const line = json.includes('\n') ? JSON.stringify(JSON.parse(json)) : json
      output.write(`${line}\n`, (error) => (error ? reject(error) : resolve()))
    })
}

/**
 * Serves MCP over a pair of streams: each line read from `input` is posted as it is to `path` on
 * `app` through `app.inject`, its answer written to `output` as it comes: a JSON answer whole, an SSE
 * answer (a call with a `progressToken`) message by message, its progress notifications while the call
 * runs. Settles when `input` ends, `output` breaks (the client went away) or `signal` aborts, after
 * the answers in flight. Closes neither the app nor the streams. Refusals go to `console.error` too.
 */
export async function serveMcpOverStdio(options: McpOverStdioOptions): Promise<void> {
  const { app, path, input, output, signal, onForwarded } = options
  const headers = forwardedHeaders(options.token, options.auth)
  const write = lineWriter(output)

  async function forward(line: string): Promise<void> {
    const message = messageOf(line)
    if (options.ready && !(typeof message?.method === 'string' && BEFORE_BOOT.test(message.method))) await options.ready
    const response = await app.inject({ method: 'POST', url: path, headers, payload: line, payloadAsStream: true })
    onForwarded?.(message, response.statusCode)
    if (String(response.headers['content-type'] ?? '').startsWith('text/event-stream')) return readEvents(response.stream(), write)
    const answer = answerOf(await readText(response.stream()), response.statusCode, message?.id)
    if (response.statusCode >= 400) console.error(`[mcp] HTTP ${response.statusCode}: ${String((answer?.error as { message?: unknown } | undefined)?.message ?? '')}`)
    if (answer) await write(JSON.stringify(answer))
  }

  const pending = new Set<Promise<void>>()
  const track = (work: Promise<void>) => {
    const done = work.catch((error: unknown) => console.error(`[mcp] ${error instanceof Error ? error.message : String(error)}`)).finally(() => pending.delete(done))
    pending.add(done)
  }
  await new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve()
    const maxLine = options.maxLineBytes ?? DEFAULT_MAX_LINE
    const stop = readLines(input, maxLine, (line) => track(forward(line)), () => {
      // The id is in the part never read: answered with none, as a body that cannot be parsed.
      console.error(`[mcp] a line over ${maxLine} bytes was refused`)
      track(write(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: SERVER_ERROR, message: TOO_LARGE } })))
    })
    const end = () => {
      stop()
      resolve()
    }
    input.once('end', end)
    input.once('error', end)
    output.on('error', end)
    signal?.addEventListener('abort', end, { once: true })
  })
  // Input ended (or the client left): answer what is in flight, then settle.
  await Promise.all(pending)
}

/**
 * stdout is the protocol's: the returned stream writes to the real stdout, and every other writer
 * (console, a library's `process.stdout.write`) lands on stderr. `onBroken` hears the client going
 * away (EPIPE on stdout, stdin failing): an end, not a fault.
 */
function takeStdout(onBroken: () => void): { protocolOut: Writable; flush: () => Promise<void> } {
  const realWrite = process.stdout.write.bind(process.stdout) as (chunk: unknown, callback: (error?: Error | null) => void) => boolean
  const protocolOut = new Writable({ write: (chunk, _encoding, callback) => void realWrite(chunk, callback) })
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write
  let broken = false
  const quit = () => {
    broken = true
    onBroken()
  }
  process.stdout.on('error', quit)
  protocolOut.on('error', quit)
  process.stdin.on('error', quit)
  // The last answers are flushed before the process ends (unless nobody reads them any more).
  const flush = () => (broken ? Promise.resolve() : new Promise<void>((resolve) => void realWrite('', () => resolve())))
  return { protocolOut, flush }
}

/**
 * The project's `rest` for serving MCP over stdio: MCP on, and off what no message over stdio can
 * reach, so a start neither loads nor builds it: the OpenAPI document and its reference page (the
 * page's bundle is the slowest import of a start), `GET /status` and compression (a forwarded
 * message asks for no encoding: nothing to compress). The MCP endpoint and its pipeline (auth, hooks, validation, rate
 * limits, limits) are the HTTP server's; discovery stays as configured (it decides, with
 * `requireAuth`, whether hidden actions are listed: createServer warns when they are).
 */
export function restForStdio(rest: Record<string, any>): Record<string, unknown> {
  const openapi = rest.openapi && typeof rest.openapi === 'object' ? { openapi: { ...rest.openapi, enabled: false, reference: false } } : {}
  return { ...rest, mcp: { ...rest.mcp, enabled: true }, ...openapi, enableStatus: false, compression: false }
}

/**
 * The project's `onBoot` (its migrations), run while the handshake is already answered; a failure or
 * its `maxWaitTime` passing ends the process with code 1, as `createServer` does.
 */
function bootInBackground(onBoot: unknown, context: unknown): Promise<void> | undefined {
  const boot = onBoot as { fn?: (context: unknown) => unknown; maxWaitTime?: number } | undefined
  if (typeof boot?.fn !== 'function') return undefined
  const fn = boot.fn
  const limit = boot.maxWaitTime ?? 10_000
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(`onBoot did not finish within ${limit}ms`)), limit)))
  return Promise.race([Promise.resolve().then(() => fn(context)), deadline]).then(
    () => clearTimeout(timer),
    (error: unknown) => {
      console.error(`[createServer.onBoot] ${error instanceof Error ? error.message : String(error)}`)
      process.exit(1)
    },
  )
}

export async function run(values: Values): Promise<void> {
  const stop = new AbortController()
  const { protocolOut, flush } = takeStdout(() => stop.abort())
  // A kept bundle of the config when its sources have not changed: the start an agent waits for.
  const project = openProject(values, { compiled: true })
  const { root } = project
  const config = await project.config()
  const auth = config.auth as { headerName?: string; cookieName?: string } | undefined
  const { server, app, resolved } = await buildProjectServer(root, config, restForStdio)
  // The path the server mounted (`rest.mcp.path`, else `{baseUrl}/mcp`, as it resolved them), and its body limit.
  const path = resolved.config.rest.mcp!.path
  const onSignal = () => stop.abort()
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  const ready = bootInBackground(config.onBoot, server.context)
  const serving = serveMcpOverStdio({ app, path, token: process.env[TOKEN_VARIABLE], auth, input: process.stdin, output: protocolOut, maxLineBytes: resolved.config.rest.bodyLimit, ready, signal: stop.signal })
  console.error(`MCP over stdio: ${path} of ${root}`)
  await serving
  await ready
  await server.close()
  await flush()
}
