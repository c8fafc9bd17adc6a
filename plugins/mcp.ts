import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, type CallToolResult, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js'
import { answerOf, type FaultLogger } from '../lib/answer.js'
import { outsideRequestScope, runInRequestScope, type RequestStore, type ServerContext } from '../lib/context.js'
import { errorMessage, type Diagnostics } from '../lib/diagnostics.js'
import type { Authenticator, Engine } from '../lib/engine.js'
import { ErrConfig, type Failure } from '../lib/errors.js'
import { collectStream, createToolRegistry, progressOf, toStreamToolResult, toToolResult, type StreamLimits, type ToolRegistry, type ToolTarget } from '../lib/mcp/tools.js'
import type { IdempotencyGuard } from './idempotency.js'
import { isActionStream } from '../lib/stream.js'
import { messages } from '../lib/messages.js'
import { ownPackage } from '../lib/own-package.js'
import type { ResolvedMcp } from './mcp-config.js'
import { sendFailure } from './wire.js'
import { boundedJsonParser, type JsonParser } from './json-body.js'
import { isSameOrigin } from './hosts.js'
import { fail } from '../lib/errors.js'
import { isPlainObject } from '../lib/envelope.js'
import { requestStoreOf } from './request-scope.js'
import { concern } from './concern.js'
import { setupContentEncoding } from './content-encoding.js'

export interface McpPluginOptions {
  engine: Engine
  context: ServerContext<any>
  bodyLimit: number
  config: ResolvedMcp
  diagnostics: Diagnostics
  /** The auth plugin's authenticator (with `config.auth`): `requireAuth` verifies every request with it. */
  authenticate?: Authenticator
  /** `rest.allowedOrigins`: the web pages that may call the endpoint (none when empty; `'*'` for every page). */
  allowedOrigins: readonly string[]
  /** `rest.maxDepth`: the deepest nesting a JSON-RPC message may have, as on the services endpoint. */
  maxDepth: number
  /** The idempotency rules shared with the services endpoint (only when an action declares `idempotency`). */
  idempotency?: IdempotencyGuard
  /** The rate limiter's client key (else the address): the principal of an unauthenticated idempotent call. */
  clientKey?: (request: FastifyRequest) => string
}

/** A body the MCP route's own JSON parser could not read: answered as JSON-RPC, not as the envelope's 400. */
class UnreadableBody {}

/** JSON-RPC's implementation-defined server error, the code the SDK's own HTTP answers use. */
const SERVER_ERROR = -32000

function jsonRpcError(code: number, message: string, id: unknown = null) {
  return { jsonrpc: '2.0' as const, error: { code, message }, id }
}

/**
 * An error the SDK answers as a JSON-RPC error with this code and exactly this message. (An
 * `McpError` prefixes its message with `MCP error <code>: `, which the SDK's client prefixes again.)
 */
function protocolError(code: number, message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code })
}

/**
 * What is wrong with a `tools/call` the SDK would answer -32603 with its schema validator's whole
 * report (a `name` that is not a string, `arguments` that are not an object): its id and a short
 * -32602 message; undefined for anything else.
 */
function toolCallProblem(body: unknown): { id: unknown; message: string } | undefined {
  if (typeof body !== 'object' || body === null || (body as { method?: unknown }).method !== 'tools/call') return undefined
  const { params, id } = body as { params?: unknown; id?: unknown }
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return undefined
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown }
  const answerId = typeof id === 'string' || typeof id === 'number' ? id : null
  if (typeof name !== 'string') return { id: answerId, message: messages.mcpNameNotString }
  if (args === undefined || isPlainObject(args)) return undefined
  return { id: answerId, message: messages.mcpArgumentsNotObject }
}

/**
 * The tool calls running in this process, by caller and JSON-RPC id: a `notifications/cancelled`
 * arrives in a request of its own (stateless: to a fresh MCP server), and is handed from here to the
 * transport of the call it names. A caller is its credential (the Authorization or Cookie header),
 * else its address: nobody cancels another caller's call.
 */
type InFlight = Map<string, (message: JSONRPCMessage) => void>

const callKey = (caller: string, id: RequestId) => `${caller}\n${typeof id}:${id}`

function callerOf(request: FastifyRequest): string {
  const credential = request.headers.authorization ?? request.headers.cookie
  return credential ? `credential:${credential}` : `address:${request.ip}`
}

/** The one request the MCP server of this HTTP request serves. */
interface McpCall {
  transport: StreamableHTTPServerTransport
  caller: string
  inFlight: InFlight
  /** `rest.mcp.maxStreamEvents` and `rest.mcp.maxStreamBytes`: what one streaming call collects. */
  streamLimits: StreamLimits
  /** The HTTP request's scope: the tool call (and a stream's generator) runs in it, the SDK outside it. */
  store: RequestStore
  /** The HTTP request's logger: server faults are logged as the JSON endpoint logs them. */
  log: FaultLogger
  /** The caller's client key (for idempotency keys of an unauthenticated caller). */
  clientKey: string
}

/**
 * One low-level MCP `Server` per request (stateless: any instance answers any request) over the tool
 * list built at boot. A tool call runs `engine.executeAction` in the HTTP request's scope (`call.store`),
 * so auth, rate limits, hooks, validation and timeouts are those of `intent: execute`; the SDK around it
 * runs outside that scope (see `answer`). The call's signal (the client's `notifications/cancelled`, or
 * the HTTP request closing) is the execution's `context.signal`.
 */
function createMcpServer(registry: ToolRegistry, identity: { name: string; version: string }, options: McpPluginOptions, validator: AjvJsonSchemaValidator, call: McpCall): Server {
  const { engine, context, diagnostics } = options
  const server = new Server(identity, { capabilities: { tools: { listChanged: false } }, jsonSchemaValidator: validator })
  const listed = { tools: registry.tools }
  server.setRequestHandler(ListToolsRequestSchema, () => listed)
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const target = registry.targets.get(request.params.name)
    // The MCP specification lists an unknown tool among protocol errors (-32602), not tool results.
    if (!target) throw protocolError(ErrorCode.InvalidParams, messages.mcpUnknownTool(request.params.name))
    const key = callKey(call.caller, extra.requestId)
    call.inFlight.set(key, (message) => call.transport.onmessage?.(message))
    try {
      return await runInRequestScope(call.store, async () => {
        if (options.idempotency && target.entry?.action.idempotency) return await guardedCall(options.idempotency, options, target, request.params, call, extra.signal)
        const result = await engine.executeAction(target.service, target.action, request.params.arguments ?? {}, context, { signal: extra.signal })
        if (!target.stream || !result.ok || !isActionStream(result.value)) return toToolResult(result, target, call.log)
        const stream = result.value
        const stop = () => stream.close()
        extra.signal.addEventListener('abort', stop, { once: true })
        const token = request.params._meta?.progressToken
        const onEvent = token === undefined ? undefined : (event: unknown, index: number, json: string) => extra.sendNotification(progressOf(token, event, index, json))
        try {
          return toStreamToolResult(await collectStream(stream, call.streamLimits, onEvent), target, call.log)
        } finally {
          extra.signal.removeEventListener('abort', stop)
        }
      })
    } catch (error) {
      // The engine never throws; this is the adapter's own fault (a value JSON cannot write): the 500 rule.
      diagnostics.error('mcp.callTool', `${target.service}.${target.action}: ${errorMessage(error)}`)
      return { isError: true, content: [{ type: 'text', text: messages.internal }] }
    } finally {
      call.inFlight.delete(key)
      // A cancelled call gets no response (the specification): end its HTTP response here instead.
      if (extra.signal.aborted) setImmediate(() => void call.transport.close())
    }
  })
  return server
}

/**
 * A tool call of an action that takes idempotency keys (`_meta.idempotencyKey`): the rules of the
 * services endpoint (plugins/idempotency.ts); a refusal is an `isError` result, a replay carries
 * `_meta.idempotentReplayed: true`. Runs in the request's scope (the authenticator reads it).
 */
function guardedCall(
  guard: IdempotencyGuard,
  options: McpPluginOptions,
  target: ToolTarget,
  params: { arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
  call: McpCall,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const { engine, context, authenticate } = options
  const action = target.entry!.action
  const payload = params.arguments ?? {}
  return guard<CallToolResult>({
    action,
    name: `${target.service}.${target.action}`,
    payload,
    key: params._meta?.idempotencyKey,
    principal: async () => {
      if (authenticate) {
        const auth = await authenticate(context)
        if (auth.ok) return `user:${auth.value.userId}`
        if (action.isProtected) return auth as Failure
      }
      return `client:${call.clientKey}`
    },
    run: async () => {
      const result = await engine.executeAction(target.service, target.action, payload, context, { signal })
      const value = toToolResult(result, target, call.log)
      // The status the JSON answer would have had: 5xx (a fault, a timeout) are not kept.
      const status = answerOf(result, target.entry).status
      return { value, stored: status < 500 && !signal.aborted ? { status, body: JSON.stringify(value) } : undefined }
    },
    refuse: (failure) => toToolResult(failure, target),
    replay: (stored) => ({ ...(JSON.parse(stored.body) as CallToolResult), _meta: { idempotentReplayed: true } }),
    log: (message) => options.diagnostics.error('mcp.idempotency', message),
  })
}

/** A `notifications/cancelled` message and the request id it names. */
function cancelledId(body: unknown): RequestId | undefined {
  const message = body as { method?: unknown; params?: { requestId?: unknown } }
  if (message?.method !== 'notifications/cancelled') return undefined
  const id = message.params?.requestId
  return typeof id === 'string' || typeof id === 'number' ? id : undefined
}

/** A tool call of a streaming tool that asks for progress: answered as SSE, so the notifications go out while it runs. */
function wantsProgress(body: unknown, registry: ToolRegistry): boolean {
  const message = body as { method?: unknown; params?: { name?: unknown; _meta?: { progressToken?: unknown } } }
  if (message?.method !== 'tools/call' || message.params?._meta?.progressToken === undefined) return false
  return typeof message.params.name === 'string' && registry.targets.get(message.params.name)?.stream === true
}

/** `reply.hijack()` forgets headers set with `reply.header()` (CORS, rate limit): hand them to the raw response. */
function keepHeaders(reply: FastifyReply): void {
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) reply.raw.setHeader(name, value)
  }
}

/** The server's name and version as MCP announces them: the package's own unless the config names them. */
function identityOf(config: ResolvedMcp): { name: string; version: string } {
  return { name: 'fastify-actions', version: ownPackage()?.version ?? '0.0.0', ...(config.name ? { name: config.name } : {}), ...(config.version ? { version: config.version } : {}) }
}

/**
 * This route's own JSON parser: a body it cannot read is answered as JSON-RPC (-32700), not as the
 * envelope. A body nested deeper than `rest.maxDepth` is refused before the SDK sees it, with the
 * services endpoint's own check and answer (400, `FA_ERR_JSON_TOO_DEEP`).
 */
function useJsonRpcParser(app: FastifyInstance, maxDepth: number): void {
  const parseJson = app.getDefaultJsonParser('error', 'error') as unknown as JsonParser
  const readable: JsonParser = (request, body, done) => parseJson(request, body, (error, value) => done(null, error ? new UnreadableBody() : value))
  const parse = boundedJsonParser(readable, maxDepth)
  app.removeAllContentTypeParsers()
  // `parseAs: 'string'` hands a string; Fastify's type still says string or Buffer.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => parse(request, body as string, done))
}

/**
 * DNS rebinding and cross-site pages (the MCP specification: servers MUST validate `Origin`): a
 * request that carries an `Origin` is served only when it is the server's own (scheme and host) or
 * listed in `allowedOrigins`; for MCP an empty list lists none, `'*'` allows every page. Agents send
 * no `Origin` and are served.
 */
export function originGuard(allowedOrigins: readonly string[]) {
  const any = allowedOrigins.includes('*')
  const listed = new Set(allowedOrigins)
  return function checkOrigin(request: FastifyRequest, reply: FastifyReply, done: () => void) {
    const origin = request.headers.origin
    if (origin === undefined || any || listed.has(origin) || isSameOrigin(origin, request)) return done()
    sendFailure(reply, fail.originNotAllowed())
  }
}

/**
 * An `onRequest` hook, before the body is read: an unauthenticated client never gets a megabyte parsed.
 * Route handlers get their request scope from the request-scope plugin; this hook runs earlier, so it opens it itself.
 */
function requireToken(verify: Authenticator, context: ServerContext<any>) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const auth = await runInRequestScope(requestStoreOf(request, reply, context), () => verify(context))
    if (!auth.ok) return sendFailure(reply, auth)
  }
}

/** The POST handler: checks the body is one JSON-RPC message, then hands the raw request to a fresh MCP server. */
function createMcpHandler(registry: ToolRegistry, identity: { name: string; version: string }, options: McpPluginOptions, validator: AjvJsonSchemaValidator) {
  const inFlight: InFlight = new Map()
  const streamLimits: StreamLimits = { events: options.config.maxStreamEvents, bytes: options.config.maxStreamBytes }
  return async function handle(request: FastifyRequest, reply: FastifyReply) {
    const body = request.body
    if (body === undefined || body instanceof UnreadableBody) {
      return reply.code(400).send(jsonRpcError(ErrorCode.ParseError, messages.mcpParseError))
    }
    // One HTTP request, one message: a batch would run up to 100 tool calls for one rate-limit hit.
    // MCP removed batching in 2025-06-18; the SDK's client never sends one.
    if (Array.isArray(body)) return reply.code(400).send(jsonRpcError(ErrorCode.InvalidRequest, messages.mcpInvalidRequest(messages.mcpNoBatches)))
    // The SDK would answer -32603 with its schema validator's whole report.
    const problem = toolCallProblem(body)
    if (problem) return reply.code(200).send(jsonRpcError(ErrorCode.InvalidParams, problem.message, problem.id))
    const caller = callerOf(request)
    const cancelled = cancelledId(body)
    if (cancelled !== undefined) inFlight.get(callKey(caller, cancelled))?.(body as JSONRPCMessage)
    keepHeaders(reply)
    reply.hijack()
    const store = requestStoreOf(request, reply, options.context)
    return outsideRequestScope(() => {
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !wantsProgress(body, registry) })
      const server = createMcpServer(registry, identity, options, validator, { transport, caller, inFlight, streamLimits, store, log: request.log, clientKey: options.clientKey?.(request) ?? request.ip })
      return answer(request, reply, body, server, transport, options.diagnostics)
    })
  }
}

/**
 * Hands the request to the SDK, outside the request scope: the SDK writes the answer (`writeHead`
 * formats the `Date` header, whose once-a-second cache arms a timer; the write itself, the keep-alive
 * timer armed when the answer finishes), and every async resource made meanwhile would carry the scope
 * it was made in, keeping the request, its body and the call alive after the answer. Only the tool
 * call itself runs in the scope (createMcpServer).
 */
async function answer(request: FastifyRequest, reply: FastifyReply, body: unknown, server: Server, transport: StreamableHTTPServerTransport, diagnostics: Diagnostics): Promise<void> {
  reply.raw.on('close', () => {
    // A disconnect before the answer is written aborts the call in flight (its `signal`). Once the answer
    // is written nothing is in flight, and closing would only make the SDK's "Connection closed" McpError
    // (a captured stack, about 5 % of an MCP call's CPU on Node 26): the pair is left to the collector.
    if (reply.raw.writableFinished) return
    void transport.close()
    void server.close()
  })
  try {
    await server.connect(transport)
    await transport.handleRequest(request.raw, reply.raw, body)
  } catch (error) {
    diagnostics.error('mcp.handleRequest', errorMessage(error))
    if (!reply.raw.headersSent) {
      reply.raw.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify(jsonRpcError(ErrorCode.InternalError, messages.internal)))
    } else reply.raw.destroy()
  }
}

/** GET and DELETE: no SSE stream, no sessions. */
function notAllowed(_request: FastifyRequest, reply: FastifyReply) {
  return reply.code(405).header('allow', 'POST').send(jsonRpcError(SERVER_ERROR, messages.mcpMethodNotAllowed))
}

/**
 * `POST {path}`: MCP's Streamable HTTP transport, stateless, JSON responses, one message per request.
 * GET (the optional SSE stream) and DELETE (sessions) answer 405, as the SDK's stateless examples do.
 */
async function serveMcp(app: FastifyInstance, options: McpPluginOptions): Promise<void> {
  const { config, context } = options
  const identity = identityOf(config)
  const registry = createToolRegistry(options.engine)
  const authenticate = config.requireAuth ? options.authenticate : undefined
  if (config.requireAuth && !authenticate) throw new ErrConfig(messages.mcpRequireAuthWithoutAuth)
  // The SDK makes an Ajv instance per Server unless given one; it is used only for elicitation, never here.
  const handle = createMcpHandler(registry, identity, options, new AjvJsonSchemaValidator())

  useJsonRpcParser(app, options.maxDepth)
  setupContentEncoding(app)
  // The Origin first: a page that may not call the endpoint learns nothing, not even whether its token is valid.
  const onRequest = [originGuard(options.allowedOrigins), ...(authenticate ? [requireToken(authenticate, context)] : [])]
  app.post(config.path, { bodyLimit: options.bodyLimit, onRequest }, handle)
  app.get(config.path, { onRequest }, notAllowed)
  app.delete(config.path, { onRequest }, notAllowed)
}

/** MCP over Streamable HTTP as the plugin `fastify-actions-mcp`. */
export const mcpPlugin = concern('mcp', serveMcp, { encapsulate: true, dependencies: ['errors', 'request-scope'] })
