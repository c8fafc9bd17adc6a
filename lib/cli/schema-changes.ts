/**
 * How a JSON Schema changed, told by the set of values it accepts: `narrowed` (accepts less),
 * `widened` (accepts more), `changed` (neither contains the other), and the property-level kinds
 * the contract's consumers care about. Whether a kind breaks depends on who writes the data and
 * who reads it: `classifyFor` (an input that accepts less breaks callers, an output that promises
 * less breaks readers).
 */

export type SchemaEffect =
  | 'narrowed'
  | 'widened'
  | 'changed'
  | 'cosmetic'
  | 'default'
  | 'property-added-optional'
  | 'property-added-required'
  | 'property-removed'
  | 'made-required'
  | 'made-optional'

export type ChangeClass = 'breaking' | 'additive' | 'cosmetic' | 'expected'

/** Input: the caller writes, the server reads. Output (values, events, declared-error data): the server writes, the caller reads. */
export type Direction = 'input' | 'output'

export interface SchemaChange {
  /** Where, in the schema: `title`, `tags[]`, `address.city`, or `` for the whole schema. */
  path: string
  effect: SchemaEffect
  detail: string
}

const CLASSES: Record<Direction, Record<SchemaEffect, ChangeClass>> = {
  input: {
    narrowed: 'breaking',
    widened: 'additive',
    changed: 'breaking',
    cosmetic: 'cosmetic',
    default: 'breaking',
    'property-added-optional': 'additive',
    'property-added-required': 'breaking',
    'property-removed': 'breaking',
    'made-required': 'breaking',
    'made-optional': 'additive',
  },
  output: {
    narrowed: 'additive',
    widened: 'breaking',
    changed: 'breaking',
    cosmetic: 'cosmetic',
    default: 'cosmetic',
    'property-added-optional': 'additive',
    'property-added-required': 'additive',
    'property-removed': 'breaking',
    'made-required': 'additive',
    'made-optional': 'breaking',
  },
}

/** The class of a schema change for the side that reads or writes the data. */
export function classifyFor(direction: Direction, effect: SchemaEffect): ChangeClass {
  return CLASSES[direction][effect]
}

type Schema = Record<string, unknown>

const ANNOTATIONS = new Set(['description', 'title', 'examples', '$comment', '$id', '$schema', 'deprecated', 'readOnly', 'writeOnly'])
const LOWER = new Set(['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties', 'minContains'])
const UPPER = new Set(['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties', 'maxContains'])
// Keywords that, added, accept less; removed, accept more; changed, neither.
const RESTRICTIONS = new Set(['pattern', 'format', 'multipleOf', 'contentMediaType', 'contentEncoding', 'propertyNames', 'contains', 'not'])
// Keywords compared below (or by the recursion), never by the generic rule.
const HANDLED = new Set(['type', 'enum', 'const', 'properties', 'required', 'additionalProperties', 'items', 'anyOf', 'oneOf', 'allOf', 'default', 'uniqueItems'])

/** A key-sorted JSON text: two schemas are the same when these are. */
export function canonical(value: unknown): string {
  return JSON.stringify(sortKeys(value))
}

/** The value with every object's keys sorted (arrays keep their order): the snapshot's stable form. */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortKeys((value as Schema)[key])]))
  }
  return value
}

const show = (value: unknown) => (value === undefined ? 'none' : JSON.stringify(value))
const join = (path: string, key: string) => (path ? `${path}.${key}` : key)

function asSchema(value: unknown): Schema | undefined {
  if (value === true) return {}
  if (value && typeof value === 'object' && !Array.isArray(value)) return value as Schema
  return undefined
}

/** Compares two schemas (`null`: none, any value accepted): every change, with its path and effect. */
export function compareSchemas(before: unknown, after: unknown, path = ''): SchemaChange[] {
  if (canonical(before) === canonical(after)) return []
  const b = asSchema(before)
  const a = asSchema(after)
  if (!b && !a) return [{ path, effect: before === false ? 'widened' : 'narrowed', detail: `schema ${show(before)} → ${show(after)}` }]
  if (!b) return [{ path, effect: before === false ? 'widened' : 'narrowed', detail: before === false ? 'accepted nothing, now a schema' : 'had no schema, now has one' }]
  if (!a) return [{ path, effect: after === false ? 'narrowed' : 'widened', detail: after === false ? 'accepts nothing now' : 'its schema was removed' }]
  const union = compareWithUnion(b, a, path)
  if (union) return union
  return [...compareKeywords(b, a, path), ...compareShapes(b, a, path)]
}

const branchesOf = (schema: Schema) => (Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined)

/** A schema that became a union (anyOf/oneOf) holding it accepts more; the reverse accepts less; else it changed. */
function compareWithUnion(b: Schema, a: Schema, path: string): SchemaChange[] | undefined {
  const [was, is] = [branchesOf(b), branchesOf(a)]
  if ((was === undefined) === (is === undefined)) return undefined
  const plain = canonical(was ? a : b)
  const branches = (was ?? is)!.map(canonical)
  const detail = was ? 'a union became one of its forms' : 'became a union (anyOf/oneOf) that includes it'
  if (!branches.includes(plain)) return [{ path, effect: 'changed', detail: was ? 'a union became another schema' : 'became a union (anyOf/oneOf)' }]
  return [{ path, effect: was ? 'narrowed' : 'widened', detail }]
}

/** The keywords of one level: annotations, type, values, bounds, restrictions, and the unknown rest. */
function compareKeywords(b: Schema, a: Schema, path: string): SchemaChange[] {
  const changes: SchemaChange[] = []
  const add = (effect: SchemaEffect, detail: string) => changes.push({ path, effect, detail })
  const types = compareSets(typesOf(b), typesOf(a), typeContains)
  if (types) add(types, `type ${show(b.type)} → ${show(a.type)}`)
  const values = compareSets(valuesOf(b), valuesOf(a), (set, value) => set.includes(value))
  if (values) add(values, `allowed values ${show(b.enum ?? b.const)} → ${show(a.enum ?? a.const)}`)
  for (const key of new Set([...Object.keys(b), ...Object.keys(a)])) {
    const [was, now] = [b[key], a[key]]
    if (canonical(was) === canonical(now) || HANDLED.has(key) || key === 'properties') continue
    const text = `${key} ${show(was)} → ${show(now)}`
    if (ANNOTATIONS.has(key)) add('cosmetic', text)
    else if (LOWER.has(key)) add(boundEffect(was, now, 1), text)
    else if (UPPER.has(key)) add(boundEffect(was, now, -1), text)
    else if (RESTRICTIONS.has(key)) add(was === undefined ? 'narrowed' : now === undefined ? 'widened' : 'changed', text)
    else add('changed', text)
  }
  if (canonical(b.default) !== canonical(a.default)) add('default', `default ${show(b.default)} → ${show(a.default)}`)
  if (Boolean(b.uniqueItems) !== Boolean(a.uniqueItems)) add(a.uniqueItems ? 'narrowed' : 'widened', `uniqueItems ${show(b.uniqueItems)} → ${show(a.uniqueItems)}`)
  return changes
}

/** A lower bound (sign 1) that rises, or an upper bound (sign -1) that falls, accepts less. */
function boundEffect(was: unknown, now: unknown, sign: 1 | -1): SchemaEffect {
  if (typeof was !== 'number' && typeof now !== 'number') return 'changed'
  if (typeof was !== 'number') return 'narrowed'
  if (typeof now !== 'number') return 'widened'
  return (now - was) * sign > 0 ? 'narrowed' : 'widened'
}

function typesOf(schema: Schema): string[] | undefined {
  if (schema.type === undefined) return undefined
  return Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string]
}

const typeContains = (set: string[], type: string) => set.includes(type) || (type === 'integer' && set.includes('number'))

function valuesOf(schema: Schema): string[] | undefined {
  if (Array.isArray(schema.enum)) return schema.enum.map(canonical)
  if ('const' in schema) return [canonical(schema.const)]
  return undefined
}

/** `undefined` (any) and two sets: the same, narrower, wider, or neither. */
function compareSets(before: string[] | undefined, after: string[] | undefined, contains: (set: string[], item: string) => boolean): SchemaEffect | undefined {
  if (before === undefined && after === undefined) return undefined
  if (before === undefined) return 'narrowed'
  if (after === undefined) return 'widened'
  const [b, a] = [before, after]
  const aInB = a.every((item) => contains(b, item))
  const bInA = b.every((item) => contains(a, item))
  if (aInB && bInA) return undefined
  return aInB ? 'narrowed' : bInA ? 'widened' : 'changed'
}

/** Properties, required, additional properties, items and the combinators, each recursively. */
function compareShapes(b: Schema, a: Schema, path: string): SchemaChange[] {
  const changes = compareProperties(b, a, path)
  changes.push(...compareAdditional(b.additionalProperties, a.additionalProperties, path))
  if (b.items !== undefined || a.items !== undefined) {
    if (Array.isArray(b.items) || Array.isArray(a.items)) {
      if (canonical(b.items) !== canonical(a.items)) changes.push({ path: `${path}[]`, effect: 'changed', detail: 'tuple items changed' })
    } else changes.push(...compareSchemas(b.items ?? null, a.items ?? null, `${path}[]`))
  }
  for (const key of ['anyOf', 'oneOf'] as const) changes.push(...compareBranches(b[key], a[key], path, key, 'widened'))
  changes.push(...compareBranches(b.allOf, a.allOf, path, 'allOf', 'narrowed'))
  return changes
}

function compareProperties(b: Schema, a: Schema, path: string): SchemaChange[] {
  const changes: SchemaChange[] = []
  const before = (asSchema(b.properties) ?? {}) as Record<string, unknown>
  const after = (asSchema(a.properties) ?? {}) as Record<string, unknown>
  const requiredBefore = new Set(Array.isArray(b.required) ? (b.required as string[]) : [])
  const requiredAfter = new Set(Array.isArray(a.required) ? (a.required as string[]) : [])
  for (const key of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
    const where = join(path, key)
    if (!(key in before)) {
      const required = requiredAfter.has(key)
      changes.push({ path: where, effect: required ? 'property-added-required' : 'property-added-optional', detail: `new ${required ? 'required' : 'optional'} field` })
    } else if (!(key in after)) {
      changes.push({ path: where, effect: 'property-removed', detail: 'field removed' })
    } else {
      if (requiredBefore.has(key) && !requiredAfter.has(key)) changes.push({ path: where, effect: 'made-optional', detail: 'now optional' })
      if (!requiredBefore.has(key) && requiredAfter.has(key)) changes.push({ path: where, effect: 'made-required', detail: 'now required' })
      changes.push(...compareSchemas(before[key], after[key], where))
    }
  }
  return changes
}

/** `additionalProperties`: absent or `true` accepts any extra field, `false` none, a schema some. */
function compareAdditional(before: unknown, after: unknown, path: string): SchemaChange[] {
  const open = (value: unknown) => value === undefined || value === true
  if (canonical(before) === canonical(after) || (open(before) && open(after))) return []
  const where = join(path, '(other fields)')
  if (open(before)) return [{ path: where, effect: 'narrowed', detail: `additionalProperties ${show(before)} → ${show(after)}` }]
  if (open(after)) return [{ path: where, effect: 'widened', detail: `additionalProperties ${show(before)} → ${show(after)}` }]
  return compareSchemas(before, after, where)
}

/**
 * anyOf/oneOf (`added` = widened) or allOf (`added` = narrowed): branches only one side has; a branch
 * replaced at the same place is compared as a schema.
 */
function compareBranches(before: unknown, after: unknown, path: string, key: string, added: 'widened' | 'narrowed'): SchemaChange[] {
  if (canonical(before) === canonical(after)) return []
  const b = Array.isArray(before) ? before : []
  const a = Array.isArray(after) ? after : []
  if (b.length === 0 || a.length === 0) return [{ path, effect: 'changed', detail: `${key} ${b.length === 0 ? 'added' : 'removed'}` }]
  const removed = added === 'widened' ? 'narrowed' : 'widened'
  const bTexts = b.map(canonical)
  const aTexts = a.map(canonical)
  const gone = b.filter((_, index) => !aTexts.includes(bTexts[index]))
  const fresh = a.filter((_, index) => !bTexts.includes(aTexts[index]))
  if (gone.length === 1 && fresh.length === 1) return compareSchemas(gone[0], fresh[0], `${path}${path ? '.' : ''}(${key})`)
  const changes: SchemaChange[] = []
  if (fresh.length > 0) changes.push({ path, effect: added, detail: `${key}: ${fresh.length} form(s) added` })
  if (gone.length > 0) changes.push({ path, effect: removed, detail: `${key}: ${gone.length} form(s) removed` })
  return changes
}
