import fastJson from 'fast-json-stringify'
import type { Action } from './action.js'
import type { ExternalResponse } from './envelope.js'
import { toJsonSchema } from './validation.js'

/** Writes a success envelope as JSON text; throws when the value does not match the schema. */
export type EnvelopeSerializer = (envelope: ExternalResponse) => string

/** An output schema that describes an object is `data` itself; anything else is wrapped as `data.result`. */
export function isObjectSchema(schema: Record<string, unknown>): boolean {
  return schema.type === 'object'
}

/** The JSON Schema of the success envelope's `data` for an output schema (the `data.result` wrapping included). */
export function dataSchemaOf(output: Record<string, unknown>): Record<string, unknown> {
  return isObjectSchema(output) ? output : { type: 'object', properties: { result: output }, required: ['result'] }
}

/** The action's `output` schema as JSON Schema, or null without one (or when it cannot be converted). */
export function outputJsonSchema(action: Action): Record<string, unknown> | null {
  return toJsonSchema(action.output, 'output')
}

/**
 * Compiles the success envelope's serializer once, at boot, as Fastify does for response schemas:
 * `fast-json-stringify` writes only the properties the schema lists, so an undeclared field never
 * reaches the client.
 */
export function compileEnvelopeSerializer(output: Record<string, unknown>): EnvelopeSerializer {
  const { $schema: _dialect, ...data } = dataSchemaOf(output)
  return fastJson({
    type: 'object',
    properties: { status: { type: 'boolean' }, message: { type: 'string' }, data },
    required: ['status', 'message', 'data'],
  }) as EnvelopeSerializer
}

/** The serializers of every action with an output schema, by `service\0action`; empty when none has one. */
export function compileOutputSerializers(services: readonly { name: string; actions: readonly Action[] }[]): Map<string, EnvelopeSerializer> {
  const serializers = new Map<string, EnvelopeSerializer>()
  for (const service of services) {
    for (const action of service.actions) {
      const output = outputJsonSchema(action)
      if (output) serializers.set(`${service.name}\u0000${action.name}`, compileEnvelopeSerializer(output))
    }
  }
  return serializers
}
