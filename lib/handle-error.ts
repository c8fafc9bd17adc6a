import { getContext } from './context.js'
import { ErrNoLogger } from './errors.js'
import { Err, type ErrResult } from './result.js'
import type { ServiceLogger } from './logger.js'

export interface HandleErrorParams {
  /** The text of the error; the client sees `[<log_id>] <message>`. */
  message: string
  /** Details for the log only. */
  data?: unknown
  /** Defaults to `getContext().resources.logger`. */
  logger?: ServiceLogger
  /** Defaults to the name of the calling function, read from the stack. */
  atFunction?: string
}

/**
 * Logs an error through the logger and returns `Err('[<log_id>] <message>')`, so the text a client
 * sees points at the log entry. Throws when no logger is given and the context has none.
 */
export function handleError({ message, data, logger, atFunction }: HandleErrorParams): ErrResult<string> {
  const target = logger ?? contextLogger()
  if (!target) throw new ErrNoLogger()
  const logId = target.error({ atFunction: atFunction ?? callerName(handleError), message, data })
  return Err(`[${logId}] ${message}`)
}

/** The context's logger, or undefined before `createServer` or when none is configured. */
export function contextLogger(): ServiceLogger | undefined {
  try {
    return getContext().resources.logger
  } catch {
    return undefined // getContext throws before createServer: there is no logger then
  }
}

/** The name of the function that called `below`, e.g. `createTask` or `TaskStore.save`; `anonymous` when it has none. */
function callerName(below: (...args: never[]) => unknown): string {
  const holder: { stack?: string } = {}
  Error.captureStackTrace(holder, below)
  const frame = holder.stack?.split('\n').find((line) => line.trimStart().startsWith('at '))
  const name = frame && /^\s*at (?:async )?(?:new )?([^\s(]+) \(/.exec(frame)?.[1]
  if (!name || name.includes('<anonymous>')) return 'anonymous'
  return name.startsWith('Object.') ? name.slice('Object.'.length) : name
}
