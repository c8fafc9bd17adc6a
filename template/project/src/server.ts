import { createServer } from 'fastify-actions'
import { isSettingError } from './settings.js'

// `npm start`: builds the server from src/config.ts and listens on HOST:PORT (127.0.0.1:8000); once
// listening it prints its URLs (PORT=0: the port taken). SIGTERM (docker stop) and Ctrl-C let
// in-flight requests finish, then close the database.

/** A setting that cannot be used (src/config.ts, or createServer's FA_ERR_CONFIG): one line and exit 1, no stack. */
function stopOnSetting(error: unknown): never {
  if (!isSettingError(error)) throw error
  console.error(`fastify-actions: ${error.message}`)
  process.exit(1)
}

const { default: config, database, redis } = await import('./config.js').catch(stopOnSetting)
console.log(`Database: ${database.description}`)
if (redis) {
  let down = false
  redis.on('error', (error: Error) => {
    if (!down) console.error(`[redis] ${error.message}: rate limits are not enforced until it answers`)
    down = true
  })
  redis.on('ready', () => (down = false))
  // A Redis that is away at start: logged above; ioredis keeps reconnecting in the background.
  await redis.connect().catch(() => {})
}
const server = await createServer(config).catch(stopOnSetting)
const { host, port } = config.rest
try {
  await server.rest.app.listen({ host, port })
} catch (error) {
  console.error(`Cannot listen on ${host}:${port}: ${error instanceof Error ? error.message : String(error)}`)
  await database.close()
  process.exit(1)
}

let closing = false
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    if (closing) return
    closing = true
    server
      .close()
      .then(() => Promise.all([database.close(), redis?.quit()]))
      .then(
        () => {
          console.log('Server closed')
          process.exit(0)
        },
        () => process.exit(1),
      )
  })
}
