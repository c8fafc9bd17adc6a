import fastJson from 'fast-json-stringify'
import { toJson, type ExternalResponse } from './envelope.js'
import { messages } from './messages.js'
import { toJsonSchema, type ValidationSchema } from './validation.js'

/** Writes a success envelope as JSON text; throws when the value does not match the schema. */
export type EnvelopeSerializer = (envelope: ExternalResponse) => string

/** Writes one event of a streaming action as JSON text; throws when the value does not match the schema. */
export type EventWriter = (value: unknown) => string

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
 * Compiles the success envelope's serializer once, at boot, as Fastify does for response schemas:
 * `fast-json-stringify` writes only the properties the schema lists, so an undeclared field never
 * reaches the client.
 */
export function compileEnvelopeSerializer(output: Record<string, unknown>): EnvelopeSerializer {
  const { $schema: _dialect, ...data } = dataSchemaOf(output)
  return compileEnvelopeWriter(data)
}

/** The serializer of an envelope whose `data` has this JSON Schema (a success's or a declared error's). */
export function compileEnvelopeWriter(data: Record<string, unknown>): EnvelopeSerializer {
  return writable(
    fastJson({
      type: 'object',
      properties: { status: { type: 'boolean' }, message: { type: 'string' }, data },
      required: ['status', 'message', 'data'],
    }) as EnvelopeSerializer,
  )
}

/** A streaming action's event writer: its `output` schema's serializer (declared fields only), else JSON. */
export function compileEventWriter(output: Record<string, unknown> | null): EventWriter {
  if (!output) return (value) => toJson(value) ?? 'null'
  const { $schema: _dialect, ...rest } = output
  return writable(fastJson(rest) as EventWriter)
}
