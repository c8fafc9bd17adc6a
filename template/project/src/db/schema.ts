import { boolean, pgTable, text, timestamp, uuid, varchar } from 'drizzle-orm/pg-core'

// The tables. After a change here, `npm run db:generate` writes the migration (src/db/migrations).

export const tasks = pgTable('tasks', {
  id: uuid('id').primaryKey().defaultRandom(),
  title: varchar('title', { length: 200 }).notNull(),
  notes: text('notes'),
  done: boolean('done').notNull().default(false),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
})
// auth:start

/** Accounts (account.signup / account.login): passwords hashed with scrypt. */
export const users = pgTable('users', {
  id: uuid('id').primaryKey().defaultRandom(),
  username: varchar('username', { length: 50 }).notNull().unique(),
  /** `scrypt:<salt>:<hash>`, both base64url. */
  passwordHash: text('password_hash').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
})
// auth:end
