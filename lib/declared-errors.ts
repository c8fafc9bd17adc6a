import type { ExternalResponse } from './envelope.js'
import { ErrConfig } from './errors.js'
import { messages } from './messages.js'
import { compileEnvelopeWriter } from './output.js'
import type { ErrResult } from './result.js'
import { compileValidator, toJsonSchema, type InferOutputSchema, type ValidationSchema, type ValidationOutcome } from './validation.js'

/**
 * Declared errors (issue 28): an action lists the ways it fails that callers must tell apart, a
 * handler returns one with `Fail(code, data?, message?)`, and the answer carries the code beside the
 * data, `{ status: false, message, data: { code, ...data } }`, with the declared HTTP status. A plain
 * `Err(text)` and the framework's own failures are untouched (400 / their status, `data` as before).
 */

/** One declared error: its HTTP status (default 400), its default message (default: the code), the schema of its data. */
export interface ErrorDeclaration {
  status?: number
  message?: string
  /** TypeBox, or a Standard Schema with JSON Schema export; it must describe an object without a `code` property. */
  data?: ValidationSchema
}

/** An action's `errors`: declarations by code (`NOT_FOUND`, `QUOTA_EXCEEDED`, …). */
export type ErrorDeclarations = Record<string, ErrorDeclaration>

/** What `Fail` returns: an `Err` that carries its code and data. `error` is the message (the code until the engine resolves it). */
export interface DeclaredFailure<C extends string = string, D = unknown> extends ErrResult<string> {
  readonly code: C
  readonly data: D
}

/** The data type of one declaration: its schema's type, or nothing (`{}` or left out). */
export type DeclaredDataOf<T> = T extends { data: infer S extends ValidationSchema } ? InferOutputSchema<S> : Record<string, never> | undefined

/** Every `Fail` a handler may return for the declarations `E`. */
export type DeclaredFailureOf<E> = { [C in keyof E & string]: DeclaredFailure<C, DeclaredDataOf<E[C]>> }[keyof E & string]

/** A handler's own `Err(text)`: no code (so a `Fail` of an undeclared code is a compile error). */
export type PlainErr = ErrResult<string> & { readonly code?: undefined }

// Across two copies of the package (a project and its tools) `Fail` must still be recognized.
const DECLARED = Symbol.for('fastify-actions.declared-error')

interface Marked {
  [DECLARED]?: { message: string | undefined }
}

function declared<C extends string, D>(code: C, data: D, message: string, given: string | undefined): DeclaredFailure<C, D> {
  const failure = { ok: false as const, error: message, code, data }
  Object.defineProperty(failure, DECLARED, { value: { message: given }, enumerable: false })
  return Object.freeze(failure)
}

/**
 * A declared error: `return Fail('NOT_FOUND', { id })`. `createAction` checks the code and the data
 * against the action's `errors`. The message is the third argument, else the declared `message`, else the code.
 */
export function Fail<const C extends string, D = undefined>(code: C, data?: D, message?: string): DeclaredFailure<C, D> {
  return declared(code, data as D, message ?? code, message)
}

/** True for a result made by `Fail` (resolved or not). */
export function isDeclaredFailure(value: unknown): value is DeclaredFailure {
  return typeof value === 'object' && value !== null && (value as Marked)[DECLARED] !== undefined
}

/** One declaration, checked: its status and message settled, the JSON Schemas of its data. */
export interface ErrorDescription {
  readonly code: string
  readonly status: number
  readonly message: string
  /** The JSON Schema of the wire `data`, `{ code, ...data }`: for OpenAPI, explore and schema. */
  readonly dataSchema: Record<string, unknown>
  /** The data schema as declared (JSON Schema), or null without one. */
  readonly data: Record<string, unknown> | null
}

/** One declaration as the engine uses it: described, its data check and envelope serializer compiled once. */
export interface CompiledError extends ErrorDescription {
  /** Writes the error envelope with only the declared fields; throws on a value it cannot write. */
  readonly serialize: (envelope: ExternalResponse) => string
  /**
   * Why the data a `Fail` carries does not match the declared `data` schema, or undefined when it
   * does (or nothing is declared). The serializer alone would coerce (`5` for a string is written `"5"`).
   */
  readonly check: (data: unknown) => string | undefined
}

export type CompiledErrors = ReadonlyMap<string, CompiledError>

const CODE = /^[A-Z][A-Z0-9_]*$/

const isPlainRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * Checks an action's `errors` (FA_ERR_CONFIG on a malformed one; `action` is `service.action`) and
 * describes each declaration, in declaration order; undefined without any.
 */
export function describeErrors(action: string, errors: unknown): ErrorDescription[] | undefined {
  if (errors === undefined || errors === null) return undefined
  if (!isPlainRecord(errors)) throw new ErrConfig(messages.errorsNotObject(action))
  const described = Object.entries(errors).map(([code, declaration]) => describeError(action, code, declaration))
  return described.length > 0 ? described : undefined
}

/** `describeErrors` plus each error's compiled envelope serializer, by code: what the engine keeps (built at boot). */
export function compileErrors(action: string, errors: unknown): CompiledErrors | undefined {
  const described = describeErrors(action, errors)
  if (!described) return undefined
  return new Map(described.map((error) => [error.code, { ...error, serialize: compileEnvelopeWriter(error.dataSchema), check: compileCheck(error.data) }]))
}

/** The data check of one declaration: the declared schema compiled (TypeBox's checker reads the JSON Schema, so every vendor's is checked alike). */
function compileCheck(data: Record<string, unknown> | null): (data: unknown) => string | undefined {
  if (!data) return () => undefined
  let validate: (value: unknown) => ValidationOutcome
  try {
    validate = compileValidator(data as ValidationSchema) as (value: unknown) => ValidationOutcome
  } catch {
    // A schema TypeBox cannot compile: its serializer remains the check.
    return () => undefined
  }
  return (value) => {
    const outcome = validate(isPlainRecord(value) ? value : {})
    return outcome.ok ? undefined : outcome.errors.map((error) => `${error.path || '/'} ${error.message}`).join('; ')
  }
}

function describeError(action: string, code: string, declaration: unknown): ErrorDescription {
  if (!CODE.test(code)) throw new ErrConfig(messages.errorCodeInvalid(action, code))
  if (code.startsWith('FA_')) throw new ErrConfig(messages.errorCodeReserved(action, code))
  if (!isPlainRecord(declaration)) throw new ErrConfig(messages.errorDeclarationInvalid(action, code))
  const { status = 400, message = code, data } = declaration as ErrorDeclaration
  if (!Number.isInteger(status) || status < 400 || status > 599) throw new ErrConfig(messages.errorStatusInvalid(action, code, status))
  if (typeof message !== 'string') throw new ErrConfig(messages.errorMessageInvalid(action, code))
  const declared = data === undefined || data === null ? null : withoutDialect(dataJsonSchema(action, code, data))
  const rest = declared ?? { type: 'object', properties: {} }
  const properties = { code: { type: 'string', const: code }, ...((rest.properties as Record<string, unknown> | undefined) ?? {}) }
  const required = ['code', ...((rest.required as string[] | undefined) ?? [])]
  return { code, status, message, dataSchema: { ...rest, type: 'object', properties, required }, data: declared }
}

function withoutDialect(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = schema
  return rest
}

function dataJsonSchema(action: string, code: string, data: unknown): Record<string, unknown> {
  const schema = isPlainRecord(data) ? toJsonSchema(data as ValidationSchema, 'output') : null
  if (!schema) throw new ErrConfig(messages.errorDataNoJsonSchema(action, code))
  if (schema.type !== 'object') throw new ErrConfig(messages.errorDataNotObject(action, code))
  const properties = schema.properties
  const required = schema.required
  if ((isPlainRecord(properties) && 'code' in properties) || (Array.isArray(required) && required.includes('code'))) {
    throw new ErrConfig(messages.errorDataHasCode(action, code))
  }
  return schema
}

// Failures the engine resolved against an action's declarations: only these pick a status.
const resolved = new WeakMap<object, CompiledError>()

/**
 * A `Fail` result checked against the answering action's declarations: the declared one, with its
 * message settled (the `Fail`'s own, else the declared default), or a plain `Err` of the same text
 * when the action does not declare the code (`undeclared` is then called, for the log).
 * Any other result is returned as is.
 */
export function resolveDeclared<R extends ErrResult<string>>(
  result: R,
  errors: CompiledErrors | undefined,
  undeclared?: (code: string) => void,
): R | DeclaredFailure | ErrResult<string> {
  const mark = (result as Marked)[DECLARED]
  if (mark === undefined) return result
  const { code, data } = result as unknown as DeclaredFailure
  const compiled = errors?.get(code)
  if (!compiled) {
    undeclared?.(code)
    return { ok: false, error: result.error }
  }
  const failure = declared(code, data, mark.message ?? compiled.message, mark.message)
  resolved.set(failure, compiled)
  return failure
}

/** The declaration a resolved failure answers with, or undefined (a plain `Err`, a framework failure, an Ok). */
export function declarationOf(result: unknown): CompiledError | undefined {
  return typeof result === 'object' && result !== null ? resolved.get(result) : undefined
}

/** The envelope's `data` of a declared error: its data with the code beside it (the code wins over a `code` in the data). */
export function declaredData(failure: DeclaredFailure): Record<string, unknown> {
  const data = failure.data
  return isPlainRecord(data) ? Object.assign({ code: failure.code }, data, { code: failure.code }) : { code: failure.code }
}
