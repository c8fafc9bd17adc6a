import { createContext, getCurrentContext, setCurrentContext } from './context.js'
import { createDiagnostics, errorMessage, scopedDiagnostics, type Diagnostics } from './diagnostics.js'
import { createEngine, fail } from './engine.js'
import { messages } from './messages.js'
import { createRestApp, normalizeBaseUrl } from './rest.js'
import type { OnBootConfig, RestInterface, ServerConfig, ServerInstance } from './types.js'
import type { ServerContext } from './context.js'

export const DEFAULT_BOOT_WAIT = 10_000

let instance: ServerInstance<any> | undefined
let pending: Promise<ServerInstance<any>> | undefined

/**
 * Builds the server: validates the config, creates the context and the engine, runs `onBoot`,
 * and creates the REST app when `config.rest` is given. The app is not listening yet:
 * call `server.rest.app.listen({ port })`, or use `app.inject` / `app.fetch`.
 */
export async function createServer<TDB = unknown>(config: ServerConfig<TDB>): Promise<ServerInstance<TDB>> {
  if (!Array.isArray(config.services) || config.services.length === 0) throw new Error(messages.emptyServices)
  if (config.forceNewInstance !== true) {
    const existing = instance ?? pending
    if (existing) {
      console.warn(messages.singletonReused)
      return existing as Promise<ServerInstance<TDB>>
    }
    // Two calls racing at start-up share one server.
    pending = build(config).finally(() => {
      pending = undefined
    })
    return pending as Promise<ServerInstance<TDB>>
  }
  return build(config)
}

async function build<TDB>(config: ServerConfig<TDB>): Promise<ServerInstance<TDB>> {

  const context = createContext<TDB>({ resources: config.resources ?? {} })
  const diagnostics = createDiagnostics(config.diagnostics === true, config.resources?.logger)
  const engine = createEngine({
    services: config.services,
    diagnostics,
    onBeforeActionHandler: config.onBeforeActionHandler,
    onAfterActionHandler: config.onAfterActionHandler,
    actionTimeout: config.actionTimeout,
  })
  // Protected actions fail closed: without a REST interface there is no request to read a token from.
  if (config.auth) engine.setAuthenticator(() => fail(401, messages.authFailed(messages.authReasons.noRequest)))
  setCurrentContext(context)

  if (config.logServices !== false) {
    console.table(
      config.services.map((service) => ({
        Service: service.name,
        Description: service.description,
        Actions: service.actions.length,
      })),
    )
  }

  if (config.onBoot) await boot(config.onBoot, context, diagnostics)

  let rest: RestInterface | undefined
  try {
    rest = config.rest
      ? await createRestApp({
          engine,
          context,
          config,
          rest: config.rest,
          // rest.diagnostics, when given, switches the REST layer's diagnostics on or off on its own.
          diagnostics: scopedDiagnostics(config.rest.diagnostics, diagnostics, config.resources?.logger),
        })
      : undefined
  } catch (error) {
    // A server that never came back must not stay reachable through getContext().
    if (getCurrentContext() === context) setCurrentContext(undefined)
    throw error
  }

  if (config.rest) {
    const host = config.rest.host ?? 'localhost'
    const port = config.rest.port ?? 8000
    console.log(`POST http://${host}:${port}${normalizeBaseUrl(config.rest.baseUrl)}/services`)
    if (config.rest.enableStatus === true) console.log(`GET http://${host}:${port}/status`)
  }

  const server: ServerInstance<TDB> = {
    config,
    engine,
    context,
    rest,
    async close() {
      if (rest) await rest.app.close()
      if (instance === server) instance = undefined
      if (getCurrentContext() === context) setCurrentContext(undefined)
    },
  }
  instance = server
  return server
}

/** Awaits `onBoot` against its deadline; a failure or timeout ends the process with code 1. */
async function boot(onBoot: OnBootConfig, context: ServerContext<any>, diagnostics: Diagnostics): Promise<void> {
  const maxWaitTime = onBoot.maxWaitTime ?? DEFAULT_BOOT_WAIT
  const started = performance.now()
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), maxWaitTime)
  })
  try {
    const outcome = await Promise.race([Promise.resolve(onBoot.fn(context)), deadline])
    if (outcome === 'timeout') {
      fatal(diagnostics, `onBoot timed out after ${maxWaitTime}ms`)
    } else if (!outcome || outcome.ok !== true) {
      fatal(diagnostics, `onBoot failed: ${outcome && outcome.ok === false ? outcome.error : 'it did not return a Result'}`)
    } else {
      console.log(`Booted in ${Math.round(performance.now() - started)}ms`)
    }
  } catch (error) {
    fatal(diagnostics, `onBoot failed: ${errorMessage(error)}`)
  } finally {
    clearTimeout(timer)
  }
}

function fatal(diagnostics: Diagnostics, message: string): never {
  // A boot failure must be seen even with diagnostics off: the process is about to end.
  if (diagnostics.enabled) diagnostics.error('createServer.onBoot', message)
  else console.error(`[createServer.onBoot] ${message}`)
  process.exit(1)
}
