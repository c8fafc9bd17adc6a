import { randomUUID } from 'node:crypto'
import { createServer, type LogEntry, type ServiceLogger } from '../lib/index.js'
import { openDatabase, setupDatabase } from './db.js'
import { greetings } from './services/greetings.js'
import { taskService } from './services/tasks.js'

const port = Number(process.env.PORT ?? 8000)
const host = process.env.HOST ?? '127.0.0.1'

/** Console logging with a short id per entry: an Err from handleError reads `[<id>] <message>`. */
function consoleLog(write: (...args: unknown[]) => void) {
  return ({ atFunction, message, data }: LogEntry) => {
    const id = randomUUID().slice(0, 8)
    write(`[${id}] ${atFunction}: ${message}`, ...(data === undefined ? [] : [JSON.stringify(data)]))
    return id
  }
}
const logger: ServiceLogger = { info: consoleLog(console.info), warn: consoleLog(console.warn), error: consoleLog(console.error) }

// PGlite under ./data by default; DATABASE_URL switches to PostgreSQL.
const database = await openDatabase()
console.log(`Database: ${database.description}`)

const server = await createServer({
  serverName: 'fastify-actions example',
  runtime: 'node',
  services: [greetings, taskService],
  diagnostics: process.env.DIAGNOSTICS === '1',
  resources: { logger, database: database.db },
  // Protected actions (tasks.claim, tasks.mine) need a token signed with JWT_SECRET when it is set.
  auth: process.env.JWT_SECRET ? { secret: process.env.JWT_SECRET } : undefined,
  onBoot: { fn: () => setupDatabase(database.db) },
  rest: {
    baseUrl: '/api',
    host,
    port,
    allowedOrigins: ['http://localhost:3000'],
    enableStatus: true,
    discovery: { enabled: true },
    mcp: { enabled: true },
  },
})

try {
  await server.rest!.app.listen({ port, host })
} catch (error) {
  console.error(`Cannot listen on ${host}:${port}: ${error instanceof Error ? error.message : String(error)}`)
  await database.close()
  process.exit(1)
}
console.log(`MCP (Streamable HTTP): http://${host}:${port}/api/mcp`)

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server
      .close()
      .then(() => database.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      )
  })
}
