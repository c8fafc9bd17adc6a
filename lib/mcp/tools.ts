import { createHash } from 'node:crypto'
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import { isStreamingAction, isVisibleToRest, type Action } from '../action.js'
import type { Engine } from '../engine.js'
import { declarationOf, type CompiledError } from '../declared-errors.js'
import { deprecationNotice } from '../deprecation.js'
import { ErrConfig, isFailure } from '../errors.js'
import { failureData, isPlainObject, toJson } from '../envelope.js'
import { messages } from '../messages.js'
import { compileEnvelopeSerializer, outputJsonSchema, type EnvelopeSerializer } from '../output.js'
import type { Result } from '../result.js'
import type { ActionStream } from '../stream.js'
import { toJsonSchema } from '../validation.js'

/** Longest tool name: MCP allows 128, but common clients (Claude, OpenAI) accept `^[a-zA-Z0-9_-]{1,64}$`. */
export const MAX_TOOL_NAME = 64

/** What a tool call runs: the action it stands for, and whether results carry structured content. */
export interface ToolTarget {
  service: string
  action: string
  /** Set when the tool has an `outputSchema`: the value goes into `structuredContent` too. */
  structured?: 'object' | 'wrapped'
  /** The action's compiled output serializer: the value is written through it, so undeclared fields never reach the agent. */
  serialize?: EnvelopeSerializer
  /** A streaming action: the call collects its events (`collectStream`). */
  stream?: true
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
function inputSchemaOf(action: Action, qualified: string): Tool['inputSchema'] {
  const schema = toJsonSchema(action.validation)
  if (!schema) return { type: 'object' }
  const object = asObjectSchema(schema)
  if (!object) throw new ErrConfig(messages.mcpInputNotObject(qualified, describeType(schema)))
  return object as Tool['inputSchema']
}

/**
 * The tool's `outputSchema` from the action's `output` (its output-side JSON Schema). An object
 * schema is the `outputSchema`; any other is wrapped as `{ result: <schema> }`, the envelope's rule.
 */
function outputSchemaOf(action: Action): { schema: Tool['outputSchema']; structured: 'object' | 'wrapped'; serialize: EnvelopeSerializer } | undefined {
  const schema = outputJsonSchema(action)
  if (!schema) return undefined
  const serialize = compileEnvelopeSerializer(schema)
  const object = asObjectSchema(schema)
  if (object) return { schema: object as Tool['outputSchema'], structured: 'object', serialize }
  return { schema: { type: 'object', properties: { result: schema }, required: ['result'] }, structured: 'wrapped', serialize }
}

/**
 * A streaming tool's `outputSchema`: `{ events, final, truncated }`, each event of the action's
 * `output` schema when it has one.
 */
function streamOutputSchema(action: Action): Tool['outputSchema'] {
  const event = outputJsonSchema(action)
  return {
    type: 'object',
    properties: { events: event ? { type: 'array', items: event } : { type: 'array' }, final: {}, truncated: { type: 'boolean' } },
    required: ['events'],
  }
}

/** Builds the tool list once; throws at boot on a schema a tool cannot take or on two actions with one tool name. */
export function createToolRegistry(engine: Engine): ToolRegistry {
  const services = engine.getServices()
  const tools: Tool[] = []
  const targets = new Map<string, ToolTarget>()
  const owners = new Map<string, string>()
  for (const service of services.value) {
    for (const action of service.actions) {
      if (!isTool(action)) continue
      const qualified = `${service.name}.${action.name}`
      const name = toolNameOf(service.name, action.name)
      const taken = owners.get(name)
      if (taken) throw new ErrConfig(messages.mcpToolNameCollision(name, taken, qualified))
      owners.set(name, qualified)
      const description = action.deprecated ? `${deprecationNotice(action.deprecated)} ${action.description}` : action.description
      const tool: Tool = { name, title: qualified, description, inputSchema: inputSchemaOf(action, qualified) }
      const target: ToolTarget = { service: service.name, action: action.name }
      const output = isStreamingAction(action) ? undefined : outputSchemaOf(action)
      if (isStreamingAction(action)) {
        target.stream = true
        tool.outputSchema = streamOutputSchema(action)
      } else if (output) {
        tool.outputSchema = output.schema
        target.structured = output.structured
        target.serialize = output.serialize
      }
      tools.push(tool)
      targets.set(name, target)
    }
  }
  return { tools, targets }
}

/**
 * A tool result from the engine's Result: `Ok(value)` is its JSON as text (and `structuredContent`
 * when the tool has an output schema); `Err` is `isError` with the envelope's message, then the
 * failure's `data` (a validation failure's `errors`) as JSON when there is any.
 */
export function toToolResult(result: Result<unknown, string>, target: ToolTarget): CallToolResult {
  if (!result.ok) {
    const declared = declarationOf(result)
    if (declared) return declaredToolResult(result, declared, target)
    const content: CallToolResult['content'] = [{ type: 'text', text: result.error }]
    if (isFailure(result) && Object.keys(result.data).length > 0) content.push({ type: 'text', text: toJsonText(result.data) })
    return { isError: true, content }
  }
  const value = target.serialize ? declaredOnly(result.value, target.serialize) : result.value
  if (value instanceof OutputMismatch) return { isError: true, content: [{ type: 'text', text: messages.internal }] }
  const text = toJsonText(value)
  const answer: CallToolResult = { content: [{ type: 'text', text }] }
  if (target.structured === 'object' && isPlainObject(value)) answer.structuredContent = JSON.parse(text) as Record<string, unknown>
  else if (target.structured === 'wrapped') answer.structuredContent = { result: JSON.parse(text) as unknown }
  return answer
}

/**
 * A declared error: `isError`, its message, then `{ code, ...data }` (written through its schema) as JSON
 * text and, for a tool without an `outputSchema`, as `structuredContent`. A tool with one keeps it out:
 * the MCP TypeScript SDK's client (1.x) checks an error's structuredContent against the outputSchema
 * and throws (modelcontextprotocol/typescript-sdk#1943).
 */
function declaredToolResult(result: Result<unknown, string> & { ok: false }, declared: CompiledError, target: ToolTarget): CallToolResult {
  const data = declaredWire(result, declared)
  if (data === undefined) return { isError: true, content: [{ type: 'text', text: messages.internal }] }
  const answer: CallToolResult = { isError: true, content: [{ type: 'text', text: result.error }, { type: 'text', text: toJsonText(data) }] }
  if (!target.structured) answer.structuredContent = data
  return answer
}

/** A declared error's wire data, `{ code, ...data }`, written through its schema; undefined when the data does not match it. */
function declaredWire(result: Result<unknown, string> & { ok: false }, declared: CompiledError): Record<string, unknown> | undefined {
  try {
    return JSON.parse(declared.serialize({ status: false, message: result.error, data: failureData(result) })).data as Record<string, unknown>
  } catch {
    return undefined
  }
}

class OutputMismatch {}

/** The value as its output schema writes it (undeclared fields dropped), or OutputMismatch when it does not match. */
function declaredOnly(value: unknown, serialize: EnvelopeSerializer): unknown {
  try {
    const data = JSON.parse(serialize({ status: true, message: '', data: isPlainObject(value) ? value : { result: value } })).data as Record<string, unknown>
    return isPlainObject(value) ? data : data.result
  } catch {
    return new OutputMismatch()
  }
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

/**
 * Reads a streaming action to its end, at most `limit` events: past that the stream is closed (the
 * generator's `finally` runs) and the result is marked truncated. `onEvent` sees each event as it
 * comes (a progress notification); its failure never stops the call.
 */
export async function collectStream(stream: ActionStream, limit: number, onEvent?: (event: unknown, index: number) => unknown): Promise<CollectedStream> {
  const events: unknown[] = []
  for await (const event of stream) {
    events.push(event)
    if (onEvent) {
      try {
        await onEvent(event, events.length - 1)
      } catch {
        // The client went away mid-call: the stream ends through the call's signal, not here.
      }
    }
    if (events.length >= limit) {
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
export function toStreamToolResult(collected: CollectedStream): CallToolResult {
  const { events, end, truncated } = collected
  if (end && !end.ok) {
    const content: CallToolResult['content'] = [{ type: 'text', text: end.error }]
    // A declared error (\`Fail\`): \`{ code, ...data }\` through its schema, as a plain tool's (no structuredContent: the tool has an outputSchema).
    const declared = declarationOf(end)
    if (declared) {
      const data = declaredWire(end, declared)
      if (data === undefined) return { isError: true, content: [{ type: 'text', text: messages.internal }] }
      content.push({ type: 'text', text: toJsonText(data) })
    } else if (isFailure(end) && Object.keys(end.data).length > 0) content.push({ type: 'text', text: toJsonText(end.data) })
    content.push({ type: 'text', text: toJsonText({ events }) })
    return { isError: true, content }
  }
  const value: Record<string, unknown> = { events }
  if (truncated) value.truncated = true
  else if (end?.ok && end.value !== undefined) value.final = end.value
  const text = toJsonText(value)
  return { content: [{ type: 'text', text }], structuredContent: JSON.parse(text) as Record<string, unknown> }
}

/** The progress notification of one event: `progress` counts events, `message` is the event as JSON. */
export function progressOf(progressToken: string | number, event: unknown, index: number) {
  return { method: 'notifications/progress' as const, params: { progressToken, progress: index + 1, message: toJsonText(event) } }
}
