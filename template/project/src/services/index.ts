import { createServices } from 'fastify-actions'
import { tasksService } from './tasks/index.js'
// auth:start
import { accountService } from './account/index.js'
// auth:end

/** Every service of the app; `fastify-actions gen service <name>` adds to this list. */
export const services = createServices([
  tasksService,
  // auth:start
  accountService,
  // auth:end
])

/** For a typed client: `createClient<AppServices>({ baseUrl })` with `import type`. */
export type AppServices = typeof services
