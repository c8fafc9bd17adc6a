import type { ServiceLogger } from './logger.js'

/** Internal diagnostic output: through `resources.logger` when present, else the console; silent when off. */
export interface Diagnostics {
  readonly enabled: boolean
  info: (atFunction: string, message: string, data?: unknown) => void
  warn: (atFunction: string, message: string, data?: unknown) => void
  error: (atFunction: string, message: string, data?: unknown) => void
}

const noop = () => {}

export function createDiagnostics(enabled: boolean, logger?: ServiceLogger): Diagnostics {
  if (!enabled) return { enabled, info: noop, warn: noop, error: noop }
  if (logger) {
    return {
      enabled,
      info: (atFunction, message, data) => void logger.info({ atFunction, message, data }),
      warn: (atFunction, message, data) => void logger.warn({ atFunction, message, data }),
      error: (atFunction, message, data) => void logger.error({ atFunction, message, data }),
    }
  }
  const line = (atFunction: string, message: string) => `[${atFunction}] ${message}`
  return {
    enabled,
    info: (atFunction, message, data) => console.info(line(atFunction, message), ...(data === undefined ? [] : [data])),
    warn: (atFunction, message, data) => console.warn(line(atFunction, message), ...(data === undefined ? [] : [data])),
    error: (atFunction, message, data) => console.error(line(atFunction, message), ...(data === undefined ? [] : [data])),
  }
}

/** A part's own `diagnostics` setting, when given, switches its output on or off; else the server's applies. */
export function scopedDiagnostics(own: boolean | undefined, server: Diagnostics, logger?: ServiceLogger): Diagnostics {
  return own === undefined || own === server.enabled ? server : createDiagnostics(own, logger)
}

/** The message of anything thrown. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message
  if (typeof error === 'string') return error
  try {
    return JSON.stringify(error) ?? String(error)
  } catch {
    return String(error)
  }
}
