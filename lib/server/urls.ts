/**
 * The URLs a server prints: one block, once the app listens, with the address it really took (a
 * port of 0 included), listing every route that is on. Before `listen` nothing is printed (the CLI's
 * `list`, `openapi` and `mcp` build the app and never listen). `createServer` prints the block on the
 * console; the plugin logs it through the host's logger at `info` (a host's JSON logs stay JSON).
 */
import type { AddressInfo } from 'node:net'
import type { ResolvedRest } from '../../plugins/config.js'

const WILDCARDS = new Set(['0.0.0.0', '::', '::0'])
const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1'])

/**
 * `http://host:port` of an address the server listens on: a wildcard address is reached on
 * localhost, and so is a loopback address when `host` (the configured one) says `localhost`.
 */
export function originOf(scheme: string, address: AddressInfo, host?: string): string {
  const name =
    WILDCARDS.has(address.address) || (host === 'localhost' && LOOPBACK.has(address.address))
      ? 'localhost'
      : address.address.includes(':')
        ? `[${address.address}]`
        : address.address
  return `${scheme}://${name}:${address.port}`
}

/** The lines for one origin: the endpoint, then status, the OpenAPI document, its reference page and MCP when they are on. */
export function urlLines(origin: string, rest: ResolvedRest, prefix: string): string[] {
  const lines = [`POST ${origin}${prefix}${rest.baseUrl}/services`]
  if (rest.enableStatus) lines.push(`GET ${origin}${prefix}/status`)
  if (rest.openapi) lines.push(`GET ${origin}${prefix}${rest.openapi.path}`)
  if (rest.openapi?.referencePath) lines.push(`GET ${origin}${prefix}${rest.openapi.referencePath}`)
  if (rest.mcp) lines.push(`POST ${origin}${prefix}${rest.mcp.path}`)
  return lines
}

/** The scheme of the app: `https` when `rest.fastify.https` is set (createServer), else `http`. */
export function schemeOf(rest: ResolvedRest): string {
  return rest.fastify.https ? 'https' : 'http'
}
