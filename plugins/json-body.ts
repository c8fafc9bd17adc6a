import type { FastifyInstance, FastifyRequest } from 'fastify'
import { fail } from '../lib/errors.js'
import { FailureError } from './http-status.js'

const OPEN_BRACE = 0x7b // {
const OPEN_BRACKET = 0x5b // [
const CLOSE_BRACE = 0x7d // }
const CLOSE_BRACKET = 0x5d // ]
const QUOTE = 0x22 // "
const BACKSLASH = 0x5c // \

/** What a character is to the depth check (ASCII only; every other character is 0): 1 `"`, 2 `{` `[`, 3 `}` `]`. */
const KIND = new Uint8Array(128)
KIND[QUOTE] = 1
KIND[OPEN_BRACE] = 2
KIND[OPEN_BRACKET] = 2
KIND[CLOSE_BRACE] = 3
KIND[CLOSE_BRACKET] = 3

/**
 * True when `text` opens more than `max` arrays or objects inside one another. One pass over the
 * characters outside strings (a table says which matter), each string skipped with a native search
 * for its closing quote; the text need not be valid JSON (JSON.parse judges that after).
 */
export function exceedsDepth(text: string, max: number): boolean {
  // Fewer characters, or fewer `{` and `[` anywhere, than levels cannot nest that deep: the common
  // body costs a few native searches instead of a pass over every character.
  if (text.length <= max || !hasMoreOpenersThan(text, max)) return false
  let depth = 0
  const length = text.length
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i)
    const kind = code < 128 ? KIND[code] : 0
    if (kind === 0) continue
    if (kind === 1) {
      // Skip the string: its closing quote is the next one not escaped (preceded by an even run of backslashes).
      for (;;) {
        const close = text.indexOf('"', i + 1)
        if (close === -1) return false
        let slashes = 0
        for (let j = close - 1; text.charCodeAt(j) === BACKSLASH; j--) slashes++
        i = close
        if ((slashes & 1) === 0) break
      }
    } else if (kind === 2) {
      if (++depth > max) return true
    } else {
      depth--
    }
  }
  return false
}

/** True when `text` holds more than `max` of `{` and `[` together, strings included (an upper bound of the depth). */
function hasMoreOpenersThan(text: string, max: number): boolean {
  let count = 0
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++count > max) return true
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++count > max) return true
  return false
}

type JsonParser = (request: FastifyRequest, body: string, done: (error: Error | null, value?: unknown) => void) => void

/**
 * JSON bodies (`application/json` and `application/*+json`) on `app`'s context: Fastify's own parser
 * (prototype poisoning refused) behind a nesting check, so a body deeper than `maxDepth` is a 400
 * envelope before it is parsed, and never a stack overflow when the answer is serialized.
 */
export function setupJsonBody(app: FastifyInstance, maxDepth: number): void {
  const parse = app.getDefaultJsonParser('error', 'error') as unknown as JsonParser
  const parseBounded: JsonParser = (request, body, done) => {
    if (exceedsDepth(body, maxDepth)) return done(new FailureError(fail.jsonTooDeep(maxDepth)))
    parse(request, body, done)
  }
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseBounded)
  app.addContentTypeParser(/^application\/[\w.+-]+\+json$/i, { parseAs: 'string' }, parseBounded)
}
