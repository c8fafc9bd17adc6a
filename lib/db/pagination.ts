/** `findPaginated`: one page of a model's rows, by offset or by cursor. */
import type { DrizzleTable as PgTable } from './types.js'
import { messages } from '../messages.js'
import { Ok, type Result } from '../result.js'
import { sqlBuilders } from './drizzle.js'
import { DEFAULT_PAGE_SIZE } from './types.js'
import { attempt, fail, modelDatabase, type ModelParts } from './model-parts.js'
import { newestFirst } from './table-info.js'
import type { CursorPage, DBX, OffsetPage, PaginationOptions } from './types.js'

type Row = Record<string, unknown>
type Page = OffsetPage<Row> | CursorPage<Row>

function cursorText(value: unknown): string {
  return value instanceof Date ? value.toISOString() : String(value)
}

/** One page of rows, newest first, in offset mode (without `cursor`) or cursor mode (with one). */
export async function findPage(parts: ModelParts<PgTable>, options: PaginationOptions = {}): Promise<Result<Page, string>> {
  const db = modelDatabase(parts, options.dbx)
  return attempt<Page>(parts, 'findPaginated', async () => {
    const limit = options.limit ?? DEFAULT_PAGE_SIZE
    const offset = options.cursor === undefined ? (options.offset ?? 0) : 0
    if (!Number.isInteger(limit) || limit < 1 || !Number.isInteger(offset) || offset < 0) {
      return fail(parts, 'findPaginated', messages.invalidPagination, { limit, offset })
    }
    if (options.cursor === undefined) return offsetPage(parts, db, limit, offset)
    return cursorPage(parts, db, limit, options.cursor, options.cursorColumn)
  })
}

/** `limit` rows after `offset`, the total and whether more follow. */
async function offsetPage(parts: ModelParts<PgTable>, db: DBX, limit: number, offset: number): Promise<Result<Page, string>> {
  const { count, desc } = await sqlBuilders()
  const [{ total }] = await db.select({ total: count() }).from(parts.table)
  const items = (await db.select().from(parts.table).orderBy(...newestFirst(parts.info, desc)).limit(limit).offset(offset)) as Row[]
  return Ok({ items, total, hasMore: offset + items.length < total })
}

/** `limit` rows below `cursor` in the cursor column, descending, and the next page's cursor. */
async function cursorPage(
  parts: ModelParts<PgTable>,
  db: DBX,
  limit: number,
  cursor: string,
  cursorColumn: string | undefined,
): Promise<Result<Page, string>> {
  const key = cursorColumn ?? parts.defaultCursor
  const { columns } = parts.info
  if (!Object.hasOwn(columns, key)) return fail(parts, 'findPaginated', messages.unknownCursorColumn(key, parts.name))
  const column = columns[key]
  // An empty cursor asks for the first page.
  const below = cursor === '' ? undefined : parts.parseKey(key, cursor)
  if (cursor !== '' && below === undefined) {
    return fail(parts, 'findPaginated', messages.invalidPagination, { cursor, cursorColumn: key })
  }
  const { lt, desc } = await sqlBuilders()
  const query = db.select().from(parts.table)
  const filtered = below === undefined ? query : query.where(lt(column, below))
  const rows = (await filtered.orderBy(desc(column)).limit(limit + 1)) as Row[]
  const hasMore = rows.length > limit
  const items = hasMore ? rows.slice(0, limit) : rows
  return Ok({ items, nextCursor: hasMore ? cursorText(items[items.length - 1][key]) : null, hasMore })
}
