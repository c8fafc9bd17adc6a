/**
 * Drizzle's SQL builders, loaded on the first query rather than with the library.
 *
 * A server that never touches a database must not pay for Drizzle: on Node 24 and 26 each Drizzle
 * module costs about 1 MiB of RSS (Node reads Drizzle's 180 KB package.json again for every module it
 * resolves in the package), so the 20 modules the data helpers used to import at load time were
 * 18 MiB of idle RSS in a server without a model. Everything the helpers need at load time (entity
 * kinds, a table's columns and name) is read through Drizzle's global symbols (entity.ts); the SQL
 * builders below are only needed once a query runs, when the application has loaded Drizzle itself.
 * These are the very modules Drizzle's entry points re-export, so values are shared with the app's.
 */
export interface SqlBuilders {
  eq: typeof import('drizzle-orm/sql/expressions/conditions').eq
  lt: typeof import('drizzle-orm/sql/expressions/conditions').lt
  desc: typeof import('drizzle-orm/sql/expressions/select').desc
  count: typeof import('drizzle-orm/sql/functions/aggregate').count
}

let builders: Promise<SqlBuilders> | undefined

/** The SQL builders, imported once, on the first call. */
export function sqlBuilders(): Promise<SqlBuilders> {
  builders ??= Promise.all([
    import('drizzle-orm/sql/expressions/conditions'),
    import('drizzle-orm/sql/expressions/select'),
    import('drizzle-orm/sql/functions/aggregate'),
  ]).then(([conditions, select, aggregate]) => ({ eq: conditions.eq, lt: conditions.lt, desc: select.desc, count: aggregate.count }))
  return builders
}
