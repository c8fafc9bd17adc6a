import { createServices } from '../../lib/index.js'
import { accountService } from './account.js'
import { greetings } from './greetings.js'
import { taskService } from './tasks.js'

/** The example's services. A typed client: `createClient<typeof services>({ baseUrl })` with `import type`. */
export const services = createServices([greetings, taskService, accountService])
export type ExampleServices = typeof services
