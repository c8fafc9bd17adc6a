// Settings read from the environment. A value that cannot be used is a SettingError, which
// src/server.ts prints as one line (`fastify-actions: <message>`) before exiting with code 1.

/** A setting that cannot be used. Its code is the one createServer gives its own configuration errors. */
export class SettingError extends Error {
  readonly code = 'FA_ERR_CONFIG'
}

/** True for a configuration error: a SettingError, or createServer's `FA_ERR_CONFIG`. */
export function isSettingError(error: unknown): error is Error {
  return error instanceof Error && (error as { code?: unknown }).code === 'FA_ERR_CONFIG'
}

/** The integer in `env[name]`, `fallback` when it is unset or empty; anything else is a SettingError. */
export function integerSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name]?.trim()
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`
    throw new SettingError(`${name} must be an integer ${range}, got ${JSON.stringify(env[name])}`)
  }
  return value
}
