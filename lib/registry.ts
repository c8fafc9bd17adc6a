import { schemaProblem } from './schema-check.js'
import { isStreamingAction, isVisibleToRest, type Action, type HookRef, type Service } from './action.js'
import { compileErrors, type CompiledErrors } from './declared-errors.js'
import { compileDeprecation, type CompiledDeprecation } from './deprecation.js'
import { ErrConfig, ErrDuplicateAction, ErrDuplicateService, ErrUnknownHook } from './errors.js'
import { messages } from './messages.js'
import { compileEnvelopeSerializer, compileEventWriter, outputJsonSchema, type EnvelopeSerializer, type EventWriter } from './output.js'
import { compileValidator, toJsonSchema, type Validator } from './validation.js'

export interface CompiledHook {
  ref: HookRef
  name: string
  target: CompiledAction
}

/**
 * One action as the engine runs it and every adapter answers it, compiled once at boot: the entry of
 * the action table (`engine.table`). Adapters read it; none compiles or describes an action again.
 */
export interface CompiledAction {
  serviceName: string
  action: Action
  /** `service.action` */
  name: string
  validate?: Validator
  /** Its declared errors, checked, described and compiled (data check, serializer); undefined when it declares none. */
  errors?: CompiledErrors
  timeout?: number
  /** A streaming action (lib/stream.ts): its handler gives events. */
  stream: boolean
  /** Its deprecation as every surface says it (REST headers, the notice); undefined when not deprecated. */
  deprecation?: CompiledDeprecation
  /** Visible to REST (not `visibility.rest: false`): listed by discovery and OpenAPI, given its own route. */
  visible: boolean
  /** Its own route below the base URL, `services/{service}/{action}` (names URI-encoded). */
  route: string
  /** The input schema as JSON Schema; null without one (or without a JSON Schema form). */
  input: Record<string, unknown> | null
  /** The `output` schema as JSON Schema (a stream's: each event's); null without one. */
  output: Record<string, unknown> | null
  /** The success envelope's serializer: an action (not a stream) with an `output` schema. */
  serialize?: EnvelopeSerializer
  /** A streaming action's event writer (its `output` schema's, else JSON). */
  writeEvent?: EventWriter
  before: CompiledHook[]
  after: CompiledHook[]
  /** Its success message, `Action 'service.action' executed`, made once. */
  executed: string
  /** The JSON text of its success envelope up to the data, `{"status":true,"message":"…","data":`, made once. */
  executedHead: string
}

/** The action table: every compiled action, in declaration order, and the lookup by names. */
export interface ActionTable {
  readonly entries: readonly CompiledAction[]
  get(service: string, action: string): CompiledAction | undefined
}

export interface CompiledService {
  service: Service
  actions: Map<string, CompiledAction>
}

export type Registry = ReadonlyMap<string, CompiledService>

/**
 * What a service or action name may be: it is spliced into a route (`{baseUrl}/services/{service}/{action}`),
 * where `*` or `:x` would be a router pattern, and into an MCP tool name, which allows these characters only.
 */
export const NAME_RULE = /^[A-Za-z0-9_-]{1,64}$/

/** `idempotency` is `'required'`, `'optional'` or absent, and never on a streaming action (a stream is not replayed). */
function checkIdempotency(action: Action, name: string): void {
  const mode = action.idempotency
  if (mode === undefined) return
  if (mode !== 'required' && mode !== 'optional') throw new ErrConfig(messages.idempotencyMode(name, mode))
  if (isStreamingAction(action)) throw new ErrConfig(messages.idempotencyOnStream(name))
}

/** Builds the lookup table once, rejecting names outside NAME_RULE, duplicate names and hooks that name no action. */
export function compileRegistry(services: readonly Service[], actionTimeout?: number): Registry {
  const registry = new Map<string, CompiledService>()
  for (const service of services) {
    if (typeof service.name !== 'string' || !NAME_RULE.test(service.name)) throw new ErrConfig(messages.invalidServiceName(service.name))
    if (registry.has(service.name)) throw new ErrDuplicateService(service.name)
    const actions = new Map<string, CompiledAction>()
    for (const action of service.actions) {
      if (typeof action.name !== 'string' || !NAME_RULE.test(action.name)) throw new ErrConfig(messages.invalidActionName(action.name, service.name))
      if (actions.has(action.name)) throw new ErrDuplicateAction(action.name, service.name)
      actions.set(action.name, compileAction(service.name, action, actionTimeout))
    }
    registry.set(service.name, { service, actions })
  }
  const resolve = (owner: CompiledAction, ref: HookRef): CompiledHook => {
    const target = registry.get(ref.service)?.actions.get(ref.action)
    if (!target) throw new ErrUnknownHook(`${ref.service}.${ref.action}`, owner.name)
    // A hook answers once; a streaming action cannot be one.
    if (target.stream) throw new ErrConfig(messages.streamAsHook(target.name, owner.name))
    return { ref, name: target.name, target }
  }
  for (const { actions } of registry.values()) {
    for (const compiled of actions.values()) {
      compiled.before = (compiled.action.hooks?.before ?? []).map((ref) => resolve(compiled, ref))
      compiled.after = (compiled.action.hooks?.after ?? []).map((ref) => resolve(compiled, ref))
    }
  }
  return registry
}

/** A schema field of an action: a TypeBox schema, a Standard Schema validator or a JSON Schema object (lib/schema-check.ts). */
function checkSchema(name: string, field: string, schema: unknown): void {
  if (schema === undefined) return
  const problem = schemaProblem(schema)
  if (problem) throw new ErrConfig(messages.notASchema(name, field, problem))
}

/** Each declared error's `data` that is an object (a declaration that is no object, or data that is none, gets the declarations' own messages). */
function checkErrorSchemas(name: string, errors: unknown): void {
  if (typeof errors !== 'object' || errors === null || Array.isArray(errors)) return
  for (const [code, declared] of Object.entries(errors)) {
    const data: unknown = (declared as { data?: unknown } | null)?.data
    if (typeof data === 'object' && data !== null) checkSchema(name, `errors.${code}.data`, data)
  }
}

function compileAction(serviceName: string, action: Action, actionTimeout: number | undefined): CompiledAction {
  const name = `${serviceName}.${action.name}`
  const executed = messages.executed(serviceName, action.name)
  checkIdempotency(action, name)
  checkSchema(name, 'validation', action.validation)
  checkSchema(name, 'output', action.output)
  checkErrorSchemas(name, action.errors)
  const errors = compileErrors(name, action.errors)
  const stream = isStreamingAction(action)
  const output = outputJsonSchema(action)
  return {
    serviceName,
    action,
    name,
    validate: action.validation ? compileValidator(action.validation) : undefined,
    errors,
    timeout: action.timeout ?? actionTimeout,
    stream,
    deprecation: compileDeprecation(name, action.deprecated),
    visible: isVisibleToRest(action),
    route: `services/${encodeURIComponent(serviceName)}/${encodeURIComponent(action.name)}`,
    input: toJsonSchema(action.validation),
    output,
    serialize: !stream && output ? compileEnvelopeSerializer(output) : undefined,
    writeEvent: stream ? compileEventWriter(output) : undefined,
    before: [],
    after: [],
    executed,
    executedHead: `{"status":true,"message":${JSON.stringify(executed)},"data":`,
  }
}

/** The registry as the table adapters read. */
export function tableOf(registry: Registry): ActionTable {
  const entries = [...registry.values()].flatMap((service) => [...service.actions.values()])
  return Object.freeze({ entries, get: (service: string, action: string) => registry.get(service)?.actions.get(action) })
}
