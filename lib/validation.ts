import type { Static, TSchema } from 'typebox'
// `typebox/schema`'s Compile: the same compiled check and the same localized errors as
// `typebox/compile`'s, without loading all of `typebox/value` (about 12 MiB of a server's memory)
// for Clean, Convert, Decode and the rest, which nothing here uses.
import { Compile, type XSchema } from 'typebox/schema'
import type { StandardSchemaV1 } from './standard-schema.js'

/** What an action's `validation` accepts: a TypeBox 1.x schema (or plain JSON Schema), or a Standard Schema v1 validator. */
export type ValidationSchema = (TSchema & object) | StandardSchemaV1

/*
 * Why `Static<S> extends infer T ? T : never` and not `Static<S>` (the same type once `S` is known):
 * while `createAction` infers its type arguments, TypeScript infers from the handler into these
 * types while `S` is still generic. Into `Static<S>` it walks every branch of TypeBox's `StaticType`,
 * which makes it compute that alias's variance: about 1.5 million instantiations and 7 to 12 s of
 * every type-check of a program with one `createAction` (issue 42). Behind `infer T` it stops at `T`.
 * The types users see do not change (test/types); the cost is held by test/check-cost.test.ts.
 */

/** The handler's `data` type, derived from the schema. */
export type InferInput<S> = S extends StandardSchemaV1
  ? StandardSchemaV1.InferOutput<S>
  : S extends TSchema
    ? Static<S> extends infer T
      ? T
      : never
    : Record<string, unknown>

/** The type an `output` schema describes: what the handler's `Ok` carries. */
export type InferOutputSchema<S> = S extends StandardSchemaV1
  ? StandardSchemaV1.InferInput<S>
  : S extends TSchema
    ? Static<S> extends infer T
      ? T
      : never
    : unknown

export interface ValidationIssue {
  /** JSON pointer to the offending value, `''` for the root. */
  path: string
  message: string
}

export type ValidationOutcome =
  | { ok: true; value: unknown }
  | { ok: false; errors: ValidationIssue[] }

/** A compiled validator: sync for TypeBox, possibly async for Standard Schema vendors. */
export type Validator = (value: unknown) => ValidationOutcome | Promise<ValidationOutcome>

export function isStandardSchema(schema: unknown): schema is StandardSchemaV1 {
  return typeof schema === 'object' && schema !== null && '~standard' in schema
}

/** Compiles a schema once, at boot. */
export function compileValidator(schema: ValidationSchema): Validator {
  if (isStandardSchema(schema)) {
    const validate = schema['~standard'].validate
    return (value) => {
      const result = validate(value)
      return result instanceof Promise ? result.then(fromStandard) : fromStandard(result)
    }
  }
  const compiled = Compile(schema as XSchema)
  return (value) => {
    if (compiled.Check(value)) return { ok: true, value }
    const errors: ValidationIssue[] = []
    for (const error of compiled.Errors(value)[1]) {
      if (!isDerivative(error)) errors.push({ path: error.instancePath, message: readable(error) })
    }
    return { ok: false, errors }
  }
}

// Properties refused by `additionalProperties: false` (or `unevaluatedProperties: false`) get a
// `schema is false` error each, next to the readable one of the object that names them.
const DERIVATIVE_SCHEMA_PATH = /\/(additionalProperties|unevaluatedProperties)$/

/** TypeBox's message, with the refused property names where it leaves them out. */
function readable(error: { keyword: string; message: string; params: unknown }): string {
  const names = (error.params as { additionalProperties?: unknown; unevaluatedProperties?: unknown } | undefined) ?? {}
  const refused = error.keyword === 'additionalProperties' ? names.additionalProperties : error.keyword === 'unevaluatedProperties' ? names.unevaluatedProperties : undefined
  return Array.isArray(refused) && refused.length > 0 ? `${error.message}: ${refused.map((name) => `'${String(name)}'`).join(', ')}` : error.message
}

/** A second error for a failure another error already reports readably. */
function isDerivative(error: { keyword: string; schemaPath: string }): boolean {
  return error.keyword === 'boolean' && DERIVATIVE_SCHEMA_PATH.test(error.schemaPath)
}

function fromStandard(result: StandardSchemaV1.Result<unknown>): ValidationOutcome {
  if (!result.issues) return { ok: true, value: result.value }
  return {
    ok: false,
    errors: result.issues.map((issue) => ({ path: toPointer(issue.path), message: issue.message })),
  }
}

function toPointer(path: StandardSchemaV1.Issue['path']): string {
  if (!path || path.length === 0) return ''
  let pointer = ''
  for (const segment of path) {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment
    pointer += '/' + String(key).replaceAll('~', '~0').replaceAll('/', '~1')
  }
  return pointer
}

/**
 * The schema as JSON Schema for the `schema` intent, or null when it cannot be converted. `side`
 * picks what a Standard Schema converts: the input it accepts, or the output (for `output` schemas).
 */
export function toJsonSchema(schema: ValidationSchema | null | undefined, side: 'input' | 'output' = 'input'): Record<string, unknown> | null {
  if (!schema) return null
  try {
    if (isStandardSchema(schema)) {
      const convert = schema['~standard'].jsonSchema?.[side]
      return convert ? convert({ target: 'draft-2020-12' }) : null
    }
    // TypeBox keeps its own markers non-enumerable, so a JSON round trip is the plain JSON Schema.
    return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>
  } catch {
    return null
  }
}
