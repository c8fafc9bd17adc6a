/**
 * An action's deprecation (`deprecated: { since, sunset?, replacement?, message? }`): checked at boot,
 * then said the same way on every surface: REST headers (RFC 9745 `Deprecation`, RFC 8594 `Sunset`),
 * the OpenAPI operation, the MCP tool's description, explore, and `fastify-actions diff`.
 */
import { ErrConfig } from './errors.js'
import { messages } from './messages.js'

export interface Deprecation {
  /** When the action was (or will be) deprecated: an ISO 8601 date or date-time, `2026-03-01`. */
  since: string
  /** After this date the action may be removed (`fastify-actions diff` then calls its removal expected). */
  sunset?: string
  /** What to call instead, e.g. `tasks.createV2`. */
  replacement?: string
  /** A sentence for callers. */
  message?: string
}

// A date (`2026-03-01`, read as UTC midnight) or a date-time with its offset; nothing Date.parse guesses at.
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/

function timeOf(value: unknown): number | undefined {
  if (typeof value !== 'string' || !ISO_DATE.test(value)) return undefined
  const time = Date.parse(value)
  return Number.isNaN(time) ? undefined : time
}

const isText = (value: unknown) => value === undefined || (typeof value === 'string' && value.trim() !== '')

/** Refuses at boot a deprecation that is not an object with an ISO `since`, an ISO `sunset` not before it, and text fields. */
export function checkDeprecation(name: string, deprecation: unknown): void {
  if (deprecation === undefined) return
  const fail = (reason: string) => new ErrConfig(messages.invalidDeprecation(name, reason))
  if (!deprecation || typeof deprecation !== 'object' || Array.isArray(deprecation)) throw fail('it must be an object { since, sunset?, replacement?, message? }')
  const { since, sunset, replacement, message, ...rest } = deprecation as Record<string, unknown>
  const unknown = Object.keys(rest)
  if (unknown.length > 0) throw fail(`unknown key '${unknown[0]}'`)
  const start = timeOf(since)
  if (start === undefined) throw fail("'since' must be an ISO 8601 date such as 2026-03-01")
  if (sunset !== undefined) {
    const end = timeOf(sunset)
    if (end === undefined) throw fail("'sunset' must be an ISO 8601 date such as 2026-09-01")
    if (end < start) throw fail("'sunset' comes before 'since'")
  }
  if (!isText(replacement)) throw fail("'replacement' must be a non-empty string")
  if (!isText(message)) throw fail("'message' must be a non-empty string")
}

/** A deprecation as every surface says it, made once at boot (the action table's `deprecation`). */
export interface CompiledDeprecation {
  /** The REST answer's `Deprecation` and `Sunset` headers. */
  readonly headers: Readonly<Record<string, string>>
  /** The sentence of the OpenAPI operation, the MCP tool's description and explore (`deprecationNotice`). */
  readonly notice: string
}

/** Checks an action's `deprecated` (`FA_ERR_CONFIG` at boot) and compiles it; undefined when it has none. */
export function compileDeprecation(name: string, deprecation: Deprecation | undefined): CompiledDeprecation | undefined {
  checkDeprecation(name, deprecation)
  if (deprecation === undefined) return undefined
  return Object.freeze({ headers: Object.freeze(deprecationHeaders(deprecation)), notice: deprecationNotice(deprecation) })
}

/** The instant a date of a checked deprecation names, in ms. */
export function deprecationTime(value: string): number {
  return Date.parse(value)
}

/** True once the sunset has passed (`now` in ms): removing the action then is expected. */
export function isPastSunset(deprecation: Deprecation | undefined | null, now: number = Date.now()): boolean {
  return deprecation?.sunset !== undefined && deprecationTime(deprecation.sunset) <= now
}

/** The one sentence every surface shows: `Deprecated since 2026-03-01; removed after 2026-09-01; use tasks.createV2 instead. <message>` */
export function deprecationNotice(deprecation: Deprecation): string {
  const parts = [`Deprecated since ${deprecation.since}`]
  if (deprecation.sunset) parts.push(`removed after ${deprecation.sunset}`)
  if (deprecation.replacement) parts.push(`use ${deprecation.replacement} instead`)
  const notice = parts.join('; ') + '.'
  return deprecation.message ? `${notice} ${deprecation.message}` : notice
}

/**
 * The REST answer's headers: `Deprecation` is an RFC 9651 date (`@` and seconds since the epoch,
 * RFC 9745); `Sunset` an HTTP-date (RFC 8594, IMF-fixdate as `toUTCString` writes it).
 */
export function deprecationHeaders(deprecation: Deprecation): Record<string, string> {
  const headers: Record<string, string> = { deprecation: `@${Math.floor(deprecationTime(deprecation.since) / 1000)}` }
  if (deprecation.sunset) headers.sunset = new Date(deprecationTime(deprecation.sunset)).toUTCString()
  return headers
}
