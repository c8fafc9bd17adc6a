import { createHash } from 'node:crypto'
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import { isVisibleToRest, type Action } from '../action.js'
import { answerOf, logFault, type FaultLogger, type WireAnswer } from '../answer.js'
import type { Engine } from '../engine.js'
import { ErrConfig } from '../errors.js'
import { isPlainObject, toJson } from '../envelope.js'
import { messages } from '../messages.js'
import type { CompiledAction } from '../registry.js'
import type { Result } from '../result.js'
import type { ActionStream } from '../stream.js'

/** Longest tool name: MCP allows 128, but common clients (Claude, OpenAI) accept `^[a-zA-Z0-9_-]{1,64}$`. */
export const MAX_TOOL_NAME = 64

/** What a tool call runs: the action it stands for, and whether results carry structured content. */
export interface ToolTarget {
  service: string
  action: string
  /** Set when the tool has an `outputSchema`: the value goes into `structuredContent` too. */
  structured?: 'object' | 'wrapped'
  /** A streaming action: the call collects its events (`collectStream`). */
  stream?: true
  /** The action's table entry: the codec writes results through its compiled serializers. */
  entry?: CompiledAction
}

/** The tools of a server, built once at boot: the `tools/list` answer and the lookup of `tools/call`. */
export interface ToolRegistry {
  readonly tools: Tool[]
  readonly targets: ReadonlyMap<string, ToolTarget>
}

type JsonSchema = Record<string, unknown>

/**
 * The tool name of an action: `<service>_<action>`, every character outside `[A-Za-z0-9_-]` replaced
 * by `_`; a name longer than 64 characters keeps its first 55 and ends with `_` and 8 hex characters
 * of the SHA-256 of `<service>.<action>`, so it stays unique and within common client limits.
 */
export function toolNameOf(service: string, action: string): string {
  const name = `${service}_${action}`.replace(/[^A-Za-z0-9_-]/g, '_')
  if (name.length <= MAX_TOOL_NAME) return name
  const digest = createHash('sha256').update(`${service}.${action}`).digest('hex').slice(0, 8)
  return `${name.slice(0, MAX_TOOL_NAME - 9)}_${digest}`
}

/** A tool is every action REST can run, minus `visibility.mcp: false` and upload actions (they take files). */
export function isTool(action: Action): boolean {
  return isVisibleToRest(action) && action.visibility?.mcp !== false && !action.isSpecial
}

/**
 * Tools take an object of arguments (MCP requires `type: "object"`). A schema without a `type` whose
 * `anyOf`/`oneOf`/`allOf` branches are all objects gets `type: "object"` added; any other schema is refused.
 */
function asObjectSchema(schema: JsonSchema): JsonSchema | undefined {
  if (schema.type === 'object') return schema
  if (schema.type !== undefined) return undefined
  const branches = (schema.anyOf ?? schema.oneOf ?? schema.allOf) as unknown
  if (Array.isArray(branches) && branches.length > 0 && branches.every((branch) => isPlainObject(branch) && asObjectSchema(branch))) {
    return { type: 'object', ...schema }
  }
  return undefined
}

function describeType(schema: JsonSchema): string {
  return typeof schema.type === 'string' ? `'${schema.type}'` : 'without an object type'
}

/** No schema, or one that has no JSON Schema form (a Standard Schema without a converter): any object. */
function inputSchemaOf(entry: CompiledAction, qualified: string): Tool['inputSchema'] {
  const schema = entry.input
  if (!schema) return { type: 'object' }
  const object = asObjectSchema(schema)
  if (!object) throw new ErrConfig(messages.mcpInputNotObject(qualified, describeType(schema)))
  return object as Tool['inputSchema']
}

/**
 * The tool's `outputSchema` from the action's `output` (its output-side JSON Schema). An object
 * schema is the `outputSchema`; any other is wrapped as `{ result: <schema> }`, the envelope's rule.
 */
function outputSchemaOf(entry: CompiledAction): { schema: Tool['outputSchema']; structured: 'object' | 'wrapped' } | undefined {
  const schema = entry.output
  if (!schema) return undefined
  const object = asObjectSchema(schema)
  if (object) return { schema: object as Tool['outputSchema'], structured: 'object' }
  return { schema: { type: 'object', properties: { result: schema }, required: ['result'] }, structured: 'wrapped' }
}

/**
 * What a generator returns has no schema of its own: any JSON value, said with a validation keyword
 * (MCP Inspector 2.x in strict mode warns about a property schema without one, such as `{}`, and about
 * a `type` list as less portable: one branch per type, as it suggests).
 */
const ANY_JSON = Object.freeze({ anyOf: ['object', 'array', 'string', 'number', 'boolean', 'null'].map((type) => Object.freeze({ type })) })

/**
 * A streaming tool's `outputSchema`: `{ events, final, truncated }`, each event of the action's
 * `output` schema when it has one.
 */
function streamOutputSchema(entry: CompiledAction): Tool['outputSchema'] {
  const event = entry.output
  return {
    type: 'object',
    properties: { events: event ? { type: 'array', items: event } : { type: 'array' }, final: ANY_JSON, truncated: { type: 'boolean' } },
    required: ['events'],
  }
}

/** Builds the tool list once; throws at boot on a schema a tool cannot take or on two actions with one tool name. */
export function createToolRegistry(engine: Engine): ToolRegistry {
  const tools: Tool[] = []
  const targets = new Map<string, ToolTarget>()
  const owners = new Map<string, string>()
  for (const entry of engine.table.entries) {
    const { action, serviceName, name: qualified } = entry
    if (!isTool(action)) continue
    const name = toolNameOf(serviceName, action.name)
    const taken = owners.get(name)
    if (taken) throw new ErrConfig(messages.mcpToolNameCollision(name, taken, qualified))
    owners.set(name, qualified)
    const description = entry.deprecation ? `${entry.deprecation.notice} ${action.description}` : action.description
    const tool: Tool = { name, title: qualified, description, inputSchema: inputSchemaOf(entry, qualified) }
    const target: ToolTarget = { service: serviceName, action: action.name, entry }
    const output = entry.stream ? undefined : outputSchemaOf(entry)
    if (entry.stream) {
      target.stream = true
      tool.outputSchema = streamOutputSchema(entry)
    } else if (output) {
      tool.outputSchema = output.schema
      target.structured = output.structured
    }
    // A repeat with the same `_meta.idempotencyKey` has no further effect: the stored result comes back.
    if (action.idempotency) tool.annotations = { idempotentHint: true }
    tools.push(tool)
    targets.set(name, target)
  }
  return { tools, targets }
}

/**
 * A tool result from the engine's Result, through the codec (lib/answer.ts, as the JSON answer is):
 * `Ok(value)` is its JSON as text (written by its output schema's serializer when it has one, and
 * `structuredContent` then); `Err` is `isError` with the envelope's message, then its `data` (a
 * validation failure's `errors`, a declared error's `{ code, ...data }`) as JSON when there is any.
 * A server fault (a 5xx, a value its schema cannot write) goes to `log`, as on the JSON endpoint.
 */
export function toToolResult(result: Result<unknown, string>, target: ToolTarget, log?: FaultLogger): CallToolResult {
  const answer = answerOf(result, target.entry)
  if (log) logFault(log, answer.fault)
  if (!answer.envelope.status) return errorResult(answer, target)
  const value = result.ok ? writtenValue(answer, result.value) : undefined
  const text = toJsonText(value)
  const tool: CallToolResult = { content: [{ type: 'text', text }] }
  if (target.structured === 'object' && isPlainObject(value)) tool.structuredContent = JSON.parse(text) as Record<string, unknown>
  else if (target.structured === 'wrapped') tool.structuredContent = { result: JSON.parse(text) as unknown }
  return tool
}

/** The value as the codec wrote it (undeclared fields dropped by the output schema's serializer), else as returned. */
function writtenValue(answer: WireAnswer, value: unknown): unknown {
  if (answer.json === undefined) return value
  const data = (JSON.parse(answer.json) as { data: Record<string, unknown> }).data
  return isPlainObject(value) ? data : data.result
}

/** The envelope's `data` as written: a declared error's through its schema's serializer, else the envelope's own. */
function errorData(answer: WireAnswer): Record<string, unknown> {
  return answer.json === undefined ? answer.envelope.data : (JSON.parse(answer.json) as { data: Record<string, unknown> }).data
}

/**
 * An `Err`: `isError`, the message, then its data as JSON when there is any. A declared error's data
 * is also `structuredContent` for a tool without an `outputSchema`; a tool with one keeps it out: the
 * MCP TypeScript SDK's client (1.x) checks an error's structuredContent against the outputSchema and
 * throws (modelcontextprotocol/typescript-sdk#1943). `after` is what a stream adds (its events).
 */
function errorResult(answer: WireAnswer, target: ToolTarget | undefined, after?: string): CallToolResult {
  const data = errorData(answer)
  const content: CallToolResult['content'] = [{ type: 'text', text: answer.envelope.message }]
  if (Object.keys(data).length > 0) content.push({ type: 'text', text: toJsonText(data) })
  if (after !== undefined) content.push({ type: 'text', text: after })
  const tool: CallToolResult = { isError: true, content }
  if (answer.declared && after === undefined && !target?.structured) tool.structuredContent = data
  return tool
}

/** JSON text for a tool result: BigInt as a string (as the envelope writes it), `undefined` as `null`. */
function toJsonText(value: unknown): string {
  return toJson(value) ?? 'null'
}

/** A streaming action's events as one tool result: what `collectStream` gathered. */
export interface CollectedStream {
  events: unknown[]
  /** How the stream ended; absent when the call stopped it at the limit (`truncated`). */
  end?: Result<unknown, string>
  /** True when the limit was reached: the action was stopped there. */
  truncated?: true
}

/** How much of a stream one tool call collects (`rest.mcp.maxStreamEvents` and `rest.mcp.maxStreamBytes`). */
export interface StreamLimits {
  /** The most events. */
  events: number
  /** The most bytes of the events' JSON, together. */
  bytes: number
}

/**
 * Reads a streaming action to its end, at most `limits.events` events whose JSON adds up to at most
 * `limits.bytes`: past either the stream is closed (the generator's `finally` runs) and the result is
 * marked truncated. An event that would pass the byte limit is left out (the answer stays within it).
 * `onEvent` sees each event kept as it comes, with its JSON (a progress notification); its failure
 * never stops the call.
 */
export async function collectStream(stream: ActionStream, limits: StreamLimits, onEvent?: (event: unknown, index: number, json: string) => unknown): Promise<CollectedStream> {
  const events: unknown[] = []
  let bytes = 0
  for await (const event of stream) {
    const json = toJsonText(event)
    bytes += Buffer.byteLength(json)
    if (bytes > limits.bytes) {
      stream.close()
      return { events, truncated: true }
    }
    events.push(event)
    if (onEvent) {
      try {
        await onEvent(event, events.length - 1, json)
      } catch {
        // The client went away mid-call: the stream ends through the call's signal, not here.
      }
    }
    if (events.length >= limits.events) {
      stream.close()
      return { events, truncated: true }
    }
  }
  return { events, end: await stream.result }
}

/**
 * The tool result of a streaming action: `{ events, final }` as JSON text (and `structuredContent`),
 * `final` left out when the generator returned nothing; with `truncated: true` and no `final` when the
 * limit stopped it. A failure after some events is `isError`: the message, then `{ events }`.
 */
export function toStreamToolResult(collected: CollectedStream, target?: ToolTarget, log?: FaultLogger): CallToolResult {
  const { events, end, truncated } = collected
  if (end && !end.ok) {
    const answer = answerOf(end, target?.entry)
    if (log) logFault(log, answer.fault)
    return errorResult(answer, target, toJsonText({ events }))
  }
  const value: Record<string, unknown> = { events }
  if (truncated) value.truncated = true
  else if (end?.ok && end.value !== undefined) value.final = end.value
  const text = toJsonText(value)
  return { content: [{ type: 'text', text }], structuredContent: JSON.parse(text) as Record<string, unknown> }
}

/** The progress notification of one event: `progress` counts events, `message` is the event as JSON (`json` when written already). */
export function progressOf(progressToken: string | number, event: unknown, index: number, json = toJsonText(event)) {
  return { method: 'notifications/progress' as const, params: { progressToken, progress: index + 1, message: json } }
}
