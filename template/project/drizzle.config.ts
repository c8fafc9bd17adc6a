import { defineConfig } from 'drizzle-kit'

// `npm run db:generate` after a change to src/db/schema.ts writes a migration into src/db/migrations;
// the server applies new migrations at start-up (src/db/client.ts).
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema.ts',
  out: './src/db/migrations',
  ...(process.env.DATABASE_URL
    ? { dbCredentials: { url: process.env.DATABASE_URL } }
    : { driver: 'pglite', dbCredentials: { url: process.env.PGLITE_DIR ?? './data/pglite' } }),
})
