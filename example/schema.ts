import { boolean, pgTable, text, timestamp, uuid, varchar } from 'drizzle-orm/pg-core'

/** The tasks of the example application. */
export const tasks = pgTable('tasks', {
  id: uuid('id').primaryKey().defaultRandom(),
  title: varchar('title', { length: 200 }).notNull(),
  notes: text('notes'),
  done: boolean('done').notNull().default(false),
  /** The `userId` of the JWT that claimed the task (tasks.claim). */
  ownerId: text('owner_id'),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
})

/** Creates what the table above needs; safe to run at every start. One statement per entry (PGlite runs one at a time). */
export const setupStatements = [
  `CREATE TABLE IF NOT EXISTS tasks (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    title varchar(200) NOT NULL,
    notes text,
    done boolean NOT NULL DEFAULT false,
    owner_id text,
    created_at timestamptz(3) NOT NULL DEFAULT now()
  )`,
  'CREATE INDEX IF NOT EXISTS tasks_owner_id_idx ON tasks (owner_id)',
]
