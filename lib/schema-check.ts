/*
 * Schemas are schemas (issue 42): an action's `validation`, `output` and declared errors' `data` must
 * be a TypeBox schema, a Standard Schema validator or a JSON Schema object. Checked once at boot:
 * anything else (a string, `{ a: 'number' }`, `minLength: 'x'`) would validate nothing, or fail
 * later inside a compiler without naming the action. TypeBox and JSON Schema objects are walked
 * against the keywords of JSON Schema (2020-12, draft-07 and OpenAPI's annotations): an unknown
 * keyword or a keyword's value of the wrong kind is refused. `x-` extensions and TypeBox's own
 * `~` keys are left alone; a Standard Schema validator is its vendor's to check.
 */

type Check = (value: unknown) => boolean

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
const nonNegativeInteger: Check = (value) => Number.isInteger(value) && (value as number) >= 0
const number: Check = (value) => typeof value === 'number' && Number.isFinite(value)
const string: Check = (value) => typeof value === 'string'
const boolean: Check = (value) => typeof value === 'boolean'
const array: Check = (value) => Array.isArray(value)
const anything: Check = () => true
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'])
const typeName: Check = (value) => typeof value === 'string' && TYPES.has(value)
const regex: Check = (value) => {
  if (typeof value !== 'string') return false
  try {
    new RegExp(value, 'u')
    return true
  } catch {
    return false
  }
}

/** The kinds a keyword's value may be, and what the refusal says it must be. */
const KEYWORDS: Record<string, [Check, string]> = Object.create(null)
const define = (names: string, check: Check, kind: string) => {
  for (const name of names.split(' ')) KEYWORDS[name] = [check, kind]
}
define('minLength maxLength minItems maxItems minProperties maxProperties minContains maxContains', nonNegativeInteger, 'a non-negative integer')
define('minimum maximum', number, 'a number')
define('exclusiveMinimum exclusiveMaximum', (value) => number(value) || boolean(value), 'a number')
define('multipleOf', (value) => number(value) && (value as number) > 0, 'a number above 0')
define('format title description $comment $id $ref $schema $anchor $dynamicRef $dynamicAnchor contentMediaType contentEncoding', string, 'a string')
define('pattern', regex, 'a regular expression')
define('type', (value) => typeName(value) || (Array.isArray(value) && value.length > 0 && value.every(typeName)), 'a JSON type name or a list of them')
define('required', (value) => Array.isArray(value) && value.every(string), 'a list of strings')
define('enum examples', array, 'a list')
define('uniqueItems readOnly writeOnly deprecated nullable', boolean, 'a boolean')
define('const default example discriminator xml externalDocs $vocabulary', anything, '')
define('dependentRequired', (value) => isObject(value) && Object.values(value).every((names) => Array.isArray(names) && names.every(string)), 'an object of string lists')
define('dependencies', isObject, 'an object')

/** Keywords whose value is a schema, an object of schemas, or a list of schemas (walked in turn). */
const SUBSCHEMA = new Set(['not', 'if', 'then', 'else', 'additionalProperties', 'unevaluatedProperties', 'propertyNames', 'contains', 'additionalItems', 'unevaluatedItems', 'contentSchema'])
const SCHEMA_MAP = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'])
const SCHEMA_LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems'])

/** Deeper than this, a schema is not walked further (TypeBox's recursive types use `$ref`, not depth). */
const MAX_DEPTH = 64

/** Why `schema` is not a schema this framework takes, or undefined when it is one. */
export function schemaProblem(schema: unknown): string | undefined {
  if (isObject(schema) && '~standard' in schema) return undefined
  if (!isObject(schema)) return `got ${describe(schema)}`
  return walk(schema, '', 0)
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`
  if (Array.isArray(value)) return 'an array'
  if (value === null) return 'null'
  return `a ${typeof value}`
}

/** A subschema: `true`/`false`, or an object walked in turn. */
function walkSchema(value: unknown, at: string, depth: number): string | undefined {
  if (typeof value === 'boolean') return undefined
  if (!isObject(value)) return `${at || '/'} must be a schema, got ${describe(value)}`
  return depth >= MAX_DEPTH ? undefined : walk(value, at, depth + 1)
}

function walk(schema: Record<string, unknown>, at: string, depth: number): string | undefined {
  for (const [key, value] of Object.entries(schema)) {
    if (key.startsWith('x-') || key.startsWith('~')) continue
    const path = `${at}/${key}`
    let problem: string | undefined
    if (SUBSCHEMA.has(key)) problem = walkSchema(value, path, depth)
    else if (key === 'items') problem = Array.isArray(value) ? walkList(value, path, depth) : walkSchema(value, path, depth)
    else if (SCHEMA_LIST.has(key)) problem = Array.isArray(value) ? walkList(value, path, depth) : `'${key}' at ${at || '/'} must be a list of schemas`
    else if (SCHEMA_MAP.has(key)) problem = isObject(value) ? walkMap(value, path, depth) : `'${key}' at ${at || '/'} must be an object of schemas`
    else {
      const rule = KEYWORDS[key]
      if (!rule) return `unknown keyword '${key}' at ${at || '/'}`
      if (!rule[0](value)) return `'${key}' at ${at || '/'} must be ${rule[1]}, got ${JSON.stringify(value) ?? describe(value)}`
    }
    if (problem) return problem
  }
  return undefined
}

function walkList(list: unknown[], at: string, depth: number): string | undefined {
  for (let index = 0; index < list.length; index++) {
    const problem = walkSchema(list[index], `${at}/${index}`, depth)
    if (problem) return problem
  }
  return undefined
}

function walkMap(map: Record<string, unknown>, at: string, depth: number): string | undefined {
  for (const [name, value] of Object.entries(map)) {
    const problem = walkSchema(value, `${at}/${name}`, depth)
    if (problem) return problem
  }
  return undefined
}
