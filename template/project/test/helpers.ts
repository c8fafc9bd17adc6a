import { createServer } from 'fastify-actions'

// The tests run on an in-memory PGlite unless DATABASE_URL names a PostgreSQL server.
process.env.PGLITE_DIR ??= 'memory://'

type Test = { teardown: (fn: () => unknown) => void }

/** The app built from src/config.ts (migrations applied), not listening; closed when the test ends. */
export async function buildApp(t: Test) {
  const { default: config, database } = await import('../src/config.js')
  const server = await createServer({ ...config, forceNewInstance: true, logServices: false })
  t.teardown(async () => {
    await server.close()
    await database.close()
  })
  return server.rest.app
}

/** The envelope of an answer: `{ status, message, data }`. */
export interface Envelope<T = any> {
  status: boolean
  message: string
  data: T
}

/** Runs an action through its own route (`POST /api/services/<service>/<action>`). */
export async function call<T = any>(app: Awaited<ReturnType<typeof buildApp>>, service: string, action: string, payload: unknown = {}, headers: Record<string, string> = {}) {
  const response = await app.inject({ method: 'POST', url: `/api/services/${service}/${action}`, payload: payload as object, headers })
  return { statusCode: response.statusCode, body: response.json<Envelope<T>>() }
}
