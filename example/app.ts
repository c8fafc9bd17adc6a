import { randomBytes, randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { createServer, type LogEntry, type RestServerInstance, type ServiceLogger } from '../lib/index.js'
import { buildClientModule } from './client-module.js'
import { openDatabase, setupDatabase, type Database } from './db.js'
import { services } from './services/index.js'

/** The web page and its script (`/assets/*`). */
export const publicDir = fileURLToPath(new URL('./public', import.meta.url))

export interface ExampleSettings {
  PORT?: string
  HOST?: string
  /** A PostgreSQL connection string; PGlite under PGLITE_DIR otherwise. */
  DATABASE_URL?: string
  PGLITE_DIR?: string
  /** Signs the login tokens; a random one per start when unset (tokens then end with the process). */
  JWT_SECRET?: string
  /** Where attachment files are written (`./data/attachments`). */
  ATTACHMENTS_DIR?: string
  /** Other origins allowed to call the API with cookies, comma-separated (`http://localhost:3000`). */
  ALLOWED_ORIGINS?: string
  DIAGNOSTICS?: string
  [name: string]: string | undefined
}

export interface Example {
  server: RestServerInstance
  database: Database
  /** `http://<host>:<port>`, once listening. */
  origin: string
  close: () => Promise<void>
}

/** Console logging with a short id per entry: an Err from handleError reads `[<id>] <message>`. */
function consoleLog(write: (...args: unknown[]) => void) {
  return ({ atFunction, message, data }: LogEntry) => {
    const id = randomUUID().slice(0, 8)
    write(`[${id}] ${atFunction}: ${message}`, ...(data === undefined ? [] : [JSON.stringify(data)]))
    return id
  }
}
const logger: ServiceLogger = { info: consoleLog(console.info), warn: consoleLog(console.warn), error: consoleLog(console.error) }

/** Builds the example server (not listening yet): database, services, auth by cookie, static page, client module. */
export async function createExample(settings: ExampleSettings = process.env): Promise<Omit<Example, 'origin'> & { port: number; host: string }> {
  const port = Number(settings.PORT ?? 8000)
  const host = settings.HOST ?? '127.0.0.1'
  const database = await openDatabase(settings)
  console.log(`Database: ${database.description}`)
  if (!settings.JWT_SECRET) console.log('JWT_SECRET is not set: tokens are signed with a random secret and end with this process')
  const clientModule = await buildClientModule()

  const server = await createServer({
    serverName: 'fastify-actions example',
    runtime: 'node',
    services,
    diagnostics: settings.DIAGNOSTICS === '1',
    resources: { logger, database: database.db, attachmentsDir: settings.ATTACHMENTS_DIR ?? './data/attachments' },
    // The page signs in with an HttpOnly cookie; account.login also answers the token for API callers.
    auth: { secret: settings.JWT_SECRET || randomBytes(32).toString('base64url'), method: 'cookie' },
    onBoot: { fn: () => setupDatabase(database.db) },
    rest: {
      baseUrl: '/api',
      host,
      port,
      allowedOrigins: (settings.ALLOWED_ORIGINS ?? 'http://localhost:3000').split(',').map((origin) => origin.trim()).filter(Boolean),
      enableStatus: true,
      enableStatic: true,
      staticDir: publicDir,
      discovery: { enabled: true },
      mcp: { enabled: true },
      // GET /api/openapi.json and the reference page GET /api/reference (docs/openapi.md), plus per-action routes.
      openapi: { enabled: true, info: { title: 'fastify-actions example', version: '1.0.0', description: 'Tasks, accounts and greetings' } },
      uploads: {
        limits: { maxFiles: 5, maxFileSize: 5 * 1024 * 1024, maxTotalSize: 10 * 1024 * 1024 },
        allow: {
          mimeTypes: ['image/png', 'image/jpeg', 'application/pdf', 'text/plain'],
          extensions: ['.png', '.jpg', '.jpeg', '.pdf', '.txt'],
        },
      },
    },
  })
  // The page's `import … from './client.js'`: the client built at start-up, served from memory.
  server.rest!.app.get('/assets/client.js', (_request, reply) => reply.type('text/javascript; charset=utf-8').send(clientModule))
  return {
    server,
    database,
    port,
    host,
    close: async () => {
      await server.close()
      await database.close()
    },
  }
}
