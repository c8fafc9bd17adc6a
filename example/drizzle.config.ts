import { defineConfig } from 'drizzle-kit'

// `npx drizzle-kit generate --config example/drizzle.config.ts` after a change to example/schema.ts.
export default defineConfig({
  dialect: 'postgresql',
  schema: './example/schema.ts',
  out: './example/drizzle',
})
