import { boolean, index, integer, pgTable, text, timestamp, uuid, varchar } from 'drizzle-orm/pg-core'

// The tables of the example application. Migrations are generated from this file by drizzle-kit
// (`npx drizzle-kit generate --config example/drizzle.config.ts`, SQL in example/drizzle/) and
// applied at start-up by example/db.ts.

/** The tasks of the example application. */
export const tasks = pgTable(
  'tasks',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    title: varchar('title', { length: 200 }).notNull(),
    notes: text('notes'),
    done: boolean('done').notNull().default(false),
    /** The `userId` of the JWT that claimed or added the task. */
    ownerId: text('owner_id'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (table) => [index('tasks_owner_id_idx').on(table.ownerId)],
)

/** The people who sign in to the web page (account.signup / account.login). */
export const users = pgTable('users', {
  id: uuid('id').primaryKey().defaultRandom(),
  username: varchar('username', { length: 50 }).notNull().unique(),
  /** `scrypt:<salt>:<hash>`, both base64url. */
  passwordHash: text('password_hash').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
})

/** Files attached to tasks; the bytes live on disk under `ATTACHMENTS_DIR`, named by `id`. */
export const attachments = pgTable(
  'attachments',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    taskId: uuid('task_id')
      .notNull()
      .references(() => tasks.id, { onDelete: 'cascade' }),
    name: varchar('name', { length: 128 }).notNull(),
    type: varchar('type', { length: 100 }).notNull(),
    size: integer('size').notNull(),
    uploadedBy: text('uploaded_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (table) => [index('attachments_task_id_idx').on(table.taskId)],
)
