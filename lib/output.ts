import fastJson from 'fast-json-stringify'
import { toJson, type ExternalResponse } from './envelope.js'
import { messages } from './messages.js'
import { toJsonSchema, type ValidationSchema } from './validation.js'

/** Writes a success envelope as JSON text; throws when the value does not match the schema. */
export type EnvelopeSerializer = (envelope: ExternalResponse) => string

/** Writes one event of a streaming action as JSON text; throws when the value does not match the schema. */
export type EventWriter = (value: unknown) => string

/**
 * A writer compiled at its first use, then kept: a start compiles none (each compilation builds an
 * Ajv instance and generated code: tens of ms of a start for a few actions, the part of
 * `fastify-actions mcp`'s start spent on writers `initialize` never uses), an action's first answer
 * compiles its own. The schemas were checked at boot
 * (lib/schema-check.ts), so compiling does not fail on a schema a start would have refused; if it
 * throws all the same, that call throws it (answered as the output mismatch it reports) and the next
 * call compiles again.
 */
function compiledOnFirstUse<T>(compile: () => (value: T) => string): (value: T) => string {
  let write: ((value: T) => string) | undefined
  return (value) => (write ??= compile())(value)
}

/** An output schema that describes an object is `data` itself; anything else is wrapped as `data.result`. */
export function isObjectSchema(schema: Record<string, unknown>): boolean {
  return schema.type === 'object'
}

/** The JSON Schema of the success envelope's `data` for an output schema (the `data.result` wrapping included). */
export function dataSchemaOf(output: Record<string, unknown>): Record<string, unknown> {
  return isObjectSchema(output) ? output : { type: 'object', properties: { result: output }, required: ['result'] }
}

/** The action's `output` schema as JSON Schema, or null without one (or when it cannot be converted). */
export function outputJsonSchema(action: { readonly output?: ValidationSchema | null }): Record<string, unknown> | null {
  return toJsonSchema(action.output, 'output')
}

/**
 * A compiled writer that never hands back text JSON cannot read. fast-json-stringify writes a value
 * the schema leaves untyped (`Type.Any()`, `{}`) with `JSON.stringify`, which gives `undefined` for a
 * function, a symbol or `undefined` itself, and the writer then splices the word in: `{"a":undefined}`.
 * Only text that holds the word is parsed again to tell; the rest costs one search.
 */
function writable<T>(write: (value: T) => string): (value: T) => string {
  return (value) => {
    const text = write(value)
    if (text.includes('undefined')) {
      try {
        JSON.parse(text)
      } catch {
        throw new Error(messages.notJson)
      }
    }
    return text
  }
}

/**
 * The success envelope's serializer, compiled once at its first use: `fast-json-stringify` writes
 * only the properties the schema lists, so an undeclared field never reaches the client.
 */
export function compileEnvelopeSerializer(output: Record<string, unknown>): EnvelopeSerializer {
  const { $schema: _dialect, ...data } = dataSchemaOf(output)
  return compileEnvelopeWriter(data)
}

/** The serializer of an envelope whose `data` has this JSON Schema (a success's or a declared error's). */
export function compileEnvelopeWriter(data: Record<string, unknown>): EnvelopeSerializer {
  return writable(
    compiledOnFirstUse(() =>
      fastJson({
        type: 'object',
        properties: { status: { type: 'boolean' }, message: { type: 'string' }, data },
        required: ['status', 'message', 'data'],
      }) as EnvelopeSerializer,
    ),
  )
}

/** A streaming action's event writer: its `output` schema's serializer (declared fields only), else JSON. */
export function compileEventWriter(output: Record<string, unknown> | null): EventWriter {
  if (!output) return (value) => toJson(value) ?? 'null'
  const { $schema: _dialect, ...rest } = output
  return writable(compiledOnFirstUse(() => fastJson(rest) as EventWriter))
}
