import type { FastifyInstance, FastifyRequest } from 'fastify'
import { fail } from '../lib/errors.js'
import { FailureError } from './wire.js'

/** Limits of this and above are walked with the explicit stack: recursion stays shallower than this. */
const RECURSION_LIMIT = 256

/**
 * True when `value` (parsed JSON) holds arrays or objects more than `max` levels inside one another;
 * the value itself is level 1. Stops at the first container past the limit. Below 256 (the default is
 * 64) a recursive walk, at most `max + 1` calls deep: half the time of the walk with its own stack on
 * Node 24 (335 against 660 µs for the payload curve's 1 MiB body, 360 against 460 on Node 26),
 * which a higher limit still gets, so that no `rest.maxDepth` can overflow the call stack.
 */
export function nestsDeeper(value: unknown, max: number): boolean {
  if (value === null || typeof value !== 'object') return false
  return max < RECURSION_LIMIT ? deeperWithin(value, 1, max) : nestsDeeperByStack(value, max)
}

function deeperWithin(node: object, depth: number, max: number): boolean {
  if (depth > max) return true
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const item: unknown = node[i]
      if (item !== null && typeof item === 'object' && deeperWithin(item, depth + 1, max)) return true
    }
    return false
  }
  for (const key in node) {
    const item = (node as Record<string, unknown>)[key]
    if (item !== null && typeof item === 'object' && deeperWithin(item, depth + 1, max)) return true
  }
  return false
}

/** `nestsDeeper` with its own stack (no recursion, so no depth can overflow it): for limits of 256 and more. */
export function nestsDeeperByStack(value: unknown, max: number): boolean {
  if (value === null || typeof value !== 'object') return false
  const nodes: object[] = [value]
  const depths: number[] = [1]
  while (nodes.length > 0) {
    const node = nodes.pop() as Record<string, unknown> | unknown[]
    const depth = depths.pop() as number
    if (depth > max) return true
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item = node[i]
        if (item !== null && typeof item === 'object') {
          nodes.push(item)
          depths.push(depth + 1)
        }
      }
    } else {
      for (const key in node) {
        const item = node[key]
        if (item !== null && typeof item === 'object') {
          nodes.push(item)
          depths.push(depth + 1)
        }
      }
    }
  }
  return false
}

/**
 * False when `text` cannot nest deeper than `max`: it is no longer than `max` characters, or holds
 * no more than `max` of `{` and `[` together, strings included (an upper bound of the depth). A few
 * native searches, so the common small body is never walked.
 */
export function mayNestDeeper(text: string, max: number): boolean {
  if (text.length <= max) return false
  let count = 0
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++count > max) return true
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++count > max) return true
  return false
}

export type JsonParser = (request: FastifyRequest, body: string, done: (error: Error | null, value?: unknown) => void) => void

/**
 * Fastify's own JSON parser (prototype poisoning refused) followed by the nesting check: a body
 * deeper than `maxDepth` is a 400 envelope before any route, validator or action sees it, and never a
 * stack overflow when the answer is serialized. V8's `JSON.parse` keeps its own stack, so parsing
 * first is safe at any depth (a body too deep is the `FA_ERR_JSON_TOO_DEEP` 400 on every route that
 * uses it, the MCP route included); walking the parsed value costs about half of scanning the text for
 * brackets outside strings (the check this replaced: docs/benchmarks.md, the payload curve).
 */
export function boundedJsonParser(parse: JsonParser, maxDepth: number): JsonParser {
  return (request, body, done) => {
    if (!mayNestDeeper(body, maxDepth)) return parse(request, body, done)
    parse(request, body, (error, value) => {
      if (error === null && nestsDeeper(value, maxDepth)) return done(new FailureError(fail.jsonTooDeep(maxDepth)))
      done(error, value)
    })
  }
}

/** JSON bodies (`application/json` and `application/*+json`) on `app`'s context, through `boundedJsonParser`. */
export function setupJsonBody(app: FastifyInstance, maxDepth: number): void {
  const parse = app.getDefaultJsonParser('error', 'error') as unknown as JsonParser
  const parseBounded = boundedJsonParser(parse, maxDepth)
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseBounded)
  app.addContentTypeParser(/^application\/[\w.+-]+\+json$/i, { parseAs: 'string' }, parseBounded)
}
