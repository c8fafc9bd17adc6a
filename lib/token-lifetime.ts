import { messages } from './messages.js'

/*
 * Token lifetimes as @fastify/jwt takes them (a number of seconds, or a duration text of `ms`),
 * checked before a token is signed and when the configuration names one (`auth.expiresIn`,
 * `auth.verify.maxAge`). No HTTP here: plugins/token.ts and plugins/auth-config.ts both use it.
 */

/** A year in seconds: a longer lifetime is a mistake (milliseconds for seconds), refused. */
const MAX_EXPIRES_IN = 365 * 24 * 3600

// The duration texts @fastify/jwt (fast-jwt, through `ms`) accepts, and their length in seconds.
const DURATION = /^(\d*\.?\d+) *(milliseconds?|msecs?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|w|years?|yrs?|y)?$/i
const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400, w: 604_800, y: 31_557_600 }

function unitSeconds(unit: string | undefined): number {
  if (!unit) return 0.001 // a bare number in a text is milliseconds in `ms`
  const u = unit.toLowerCase()
  if (u.startsWith('ms') || u.startsWith('msec') || u.startsWith('milli')) return UNIT_SECONDS.ms!
  return UNIT_SECONDS[u[0]!]!
}

/**
 * Checks a token lifetime before it is signed: a positive number of seconds or a duration text, at
 * most a year. Returns the message of a refusal, or undefined.
 */
export function expiresInProblem(value: unknown): string | undefined {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value <= 0) return messages.tokenExpiresInInvalid(String(value))
    return value > MAX_EXPIRES_IN ? messages.tokenExpiresInTooLong(String(value)) : undefined
  }
  const found = typeof value === 'string' ? DURATION.exec(value.trim()) : null
  if (!found) return messages.tokenExpiresInInvalid(JSON.stringify(value))
  const seconds = Number(found[1]) * unitSeconds(found[2])
  if (!(seconds > 0)) return messages.tokenExpiresInInvalid(JSON.stringify(value))
  return seconds > MAX_EXPIRES_IN ? messages.tokenExpiresInTooLong(JSON.stringify(value)) : undefined
}
