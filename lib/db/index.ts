/** Data-access helpers on Drizzle (PostgreSQL: PGlite or node-postgres). */
export { createModel, DEFAULT_PAGE_SIZE } from './model.js'
export { getValidationSchemas } from './schemas.js'
export { createTransactionVariant } from './transaction.js'
export { databaseCause } from './errors.js'
export type {
  CursorPage,
  CursorPaginationOptions,
  DBParams,
  DBX,
  InsertSchema,
  Model,
  ModelInsert,
  ModelOptions,
  ModelRow,
  ModelUpdate,
  OffsetPage,
  OffsetPaginationOptions,
  PaginationOptions,
  SelectSchema,
  TableSchemas,
  UpdateParams,
  UpdateSchema,
  WriteParams,
} from './types.js'
