import type { UploadMode } from '../action.js'
import { fail, type Failure } from '../errors.js'
import { messages } from '../messages.js'

/** One part of a form, in the order it arrived. */
export type FormEntry<F = File> = { kind: 'field'; name: string; value: string } | { kind: 'file'; name: string; file: F }

/** What an upload action's handler receives as `data`. */
export interface UploadPayload<F = File> {
  fields: Record<string, string | string[]>
  files: Record<string, F | F[]>
}

/** Keys that carry both a file and a string value, in the order they first appear. */
export function findMixedKeys(entries: readonly FormEntry<unknown>[]): string[] {
  const kinds = new Map<string, Set<FormEntry['kind']>>()
  for (const entry of entries) {
    const seen = kinds.get(entry.name) ?? new Set()
    seen.add(entry.kind)
    kinds.set(entry.name, seen)
  }
  return [...kinds].filter(([, seen]) => seen.size > 1).map(([name]) => name)
}

/** `flat` refuses a key that carries both a file and a string; `structured` accepts any mix. */
export function checkUploadMode(entries: readonly FormEntry<unknown>[], mode: UploadMode): Failure | undefined {
  if (mode !== 'flat') return undefined
  const conflicts = findMixedKeys(entries)
  if (conflicts.length === 0) return undefined
  return fail.uploadMixedKeys({ conflicts, hint: messages.mixedKeyTypesHint })
}

function collect<T>(pairs: Array<[string, T]>): Record<string, T | T[]> {
  const grouped = new Map<string, T[]>()
  for (const [name, value] of pairs) {
    const values = grouped.get(name)
    if (values) values.push(value)
    else grouped.set(name, [value])
  }
  // fromEntries defines own properties, so a key such as `__proto__` stays a plain key.
  return Object.fromEntries([...grouped].map(([name, values]) => [name, values.length === 1 ? values[0] : values]))
}

/** Files and fields to their own buckets; a key given more than once becomes an array, in form order. */
export function bucketForm<F>(entries: readonly FormEntry<F>[]): UploadPayload<F> {
  const fields: Array<[string, string]> = []
  const files: Array<[string, F]> = []
  for (const entry of entries) {
    if (entry.kind === 'field') fields.push([entry.name, entry.value])
    else files.push([entry.name, entry.file])
  }
  return { fields: collect(fields), files: collect(files) }
}
