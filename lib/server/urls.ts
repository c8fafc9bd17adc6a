/**
 * The URLs a server prints. `createServer` prints the specification's lines from `rest.host` and
 * `rest.port` before anything listens; once the app listens on another address (another port, a
 * port of 0, another interface), the URLs it really answers on are printed too, for `createServer`
 * and for the plugin (which prints nothing before).
 */
import type { AddressInfo } from 'node:net'
import type { ResolvedRest } from '../../plugins/config.js'

const WILDCARDS = new Set(['0.0.0.0', '::', '::0'])
const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1'])

/** `http://host:port` of an address the server listens on; a wildcard address is reached on localhost. */
export function originOf(scheme: string, address: AddressInfo): string {
  const host = WILDCARDS.has(address.address) ? 'localhost' : address.address.includes(':') ? `[${address.address}]` : address.address
  return `${scheme}://${host}:${address.port}`
}

/** True when `printed` (`rest.host`, `rest.port`) reaches the address the app listens on. */
export function reaches(printed: { host: string; port: number }, address: AddressInfo): boolean {
  if (printed.port !== address.port) return false
  if (WILDCARDS.has(address.address) || printed.host === address.address) return true
  return printed.host === 'localhost' && LOOPBACK.has(address.address)
}

/** The lines for one origin: the endpoint, then status, the reference page and MCP when they are on. */
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
