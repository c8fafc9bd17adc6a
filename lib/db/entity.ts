import type { Column } from 'drizzle-orm'

// Drizzle's key of a class's entity kind (`entityKind` of 'drizzle-orm/entity', a global symbol).
const entityKind = Symbol.for('drizzle:entityKind')

/*
 * The data helpers import Drizzle module by module ('drizzle-orm/table', '…/sql/expressions/…')
 * rather than from 'drizzle-orm' or 'drizzle-orm/pg-core': the package's entry points load about
 * 400 modules, and Node 24 re-reads Drizzle's 180 KB package.json for each of them (over 150 MiB
 * of RSS at boot for a server that never touches a database). These are the very same modules the
 * entry points re-export, so values and classes are shared with the application's own imports.
 */

/**
 * Drizzle's `is(value, Class)` by the class's entity kind (`'PgDatabase'`, `'Relations'`), so the
 * class, and the module graph behind it, need not be imported. The same walk as `is`: the value's
 * class or any class it extends carries that kind.
 */
export function isEntity(value: unknown, kind: string): boolean {
  if (!value || typeof value !== 'object') return false
  let cls: unknown = Object.getPrototypeOf(value)?.constructor
  while (typeof cls === 'function') {
    if (entityKind in cls && (cls as unknown as Record<symbol, unknown>)[entityKind] === kind) return true
    cls = Object.getPrototypeOf(cls)
  }
  return false
}

// Drizzle's own key of a table's columns (`Table.Symbol.Columns`, a global symbol; its type is internal).
const COLUMNS = Symbol.for('drizzle:Columns')

/** Drizzle's `getTableColumns`, which lives in 'drizzle-orm/utils' beside much else. */
export function tableColumns(table: object): Record<string, Column> {
  return (table as unknown as Record<symbol, Record<string, Column>>)[COLUMNS]
}

// Drizzle's own key of a table's name (`Table.Symbol.Name`, a global symbol).
const NAME = Symbol.for('drizzle:Name')

/** Drizzle's `getTableName`, without importing 'drizzle-orm/table'. */
export function tableName(table: object): string {
  return (table as unknown as Record<symbol, string>)[NAME]
}
