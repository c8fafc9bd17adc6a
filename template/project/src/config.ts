// auth:start
import { randomBytes } from 'node:crypto'
// auth:end
import type { ServerConfig } from 'fastify-actions'
import type { Redis } from 'ioredis'
import { migrateDatabase, openDatabase, type Db } from './db/client.js'
import { requireSecrets } from './secrets.js'
import { integerSetting } from './settings.js'
import { services } from './services/index.js'

// The server's config: src/server.ts gives it to createServer, and the fastify-actions CLI reads it
// (`npx fastify-actions list`, `openapi`, `mcp`). Settings come from the environment (.env.example).

const env = process.env
const production = env.NODE_ENV === 'production'
// Every secret the server reads: DISCOVERY_SECRET opens explore, schema and the OpenAPI document.
const secrets = ['DISCOVERY_SECRET']
// auth:start
secrets.push('JWT_SECRET') // signs the login tokens
// auth:end
if (production) requireSecrets(env, secrets)

/** PostgreSQL when DATABASE_URL is set, else embedded PGlite. */
export const database = await openDatabase(env)

/**
 * Rate-limit counters shared by every instance through Redis when REDIS_URL is set. Made to fail fast:
 * no offline queue and a command timeout, so a Redis that is away or stalled lets requests through
 * unlimited (logged) instead of holding them. src/server.ts connects it; the CLI never does.
 * ioredis is imported only then: a start without Redis (and `fastify-actions mcp`) does not load it.
 */
export const redis: Redis | undefined = env.REDIS_URL
  ? new (await import('ioredis')).Redis(env.REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 500 })
  : undefined

const config = {
  serverName: '{{name}}',
  services,
  resources: { database: database.db },
  // No action holds a request longer than this (504 after it): a stalled database answers, not hangs.
  actionTimeout: integerSetting(env, 'ACTION_TIMEOUT_MS', 10_000),
  // Migrations run at every start, on PGlite and PostgreSQL alike. PGlite's first set-up of an
  // empty data directory takes seconds, more on a loaded machine: the limit leaves room for it.
  onBoot: { fn: () => migrateDatabase(database.db), maxWaitTime: 120_000 },
  // auth:start
  // Tokens from account.login / account.signup; a random secret per start unless JWT_SECRET is set.
  auth: { secret: env.JWT_SECRET || randomBytes(32).toString('base64url'), method: 'header' },
  // auth:end
  rest: {
    baseUrl: '/api',
    host: env.HOST ?? '127.0.0.1',
    // PORT=0 takes any free port: the URLs printed once it listens name the one taken.
    port: integerSetting(env, 'PORT', 8000, 0, 65535),
    // The dev servers of Vite (5173) and Next.js (3000) by default.
    allowedOrigins: (env.ALLOWED_ORIGINS ?? 'http://localhost:5173,http://localhost:3000').split(',').map((origin) => origin.trim()).filter(Boolean),
    enableStatus: true,
    // explore/schema and the OpenAPI document: open in development, behind DISCOVERY_SECRET in production.
    discovery: { enabled: true, secret: env.DISCOVERY_SECRET || undefined },
    openapi: { enabled: true, info: { title: '{{name}}', version: '0.1.0' } },
    mcp: { enabled: true },
    rateLimiting: { limitingHeader: 'x-api-key', limit: integerSetting(env, 'RATE_LIMIT', 1000), windowMs: 60_000, ...(redis ? { redis } : {}) },
  },
} satisfies ServerConfig<Db>

export default config
