import { isIP } from 'node:net'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { fail } from '../lib/errors.js'
import { sendFailure } from './http-status.js'
import { concern } from './concern.js'

/*
 * The Host allowlist against DNS rebinding: a page on `attacker.example` whose name is re-pointed at
 * 127.0.0.1 reaches a server on the developer's machine with `Host: attacker.example` (Vite's
 * `server.allowedHosts` and webpack-dev-server's `allowedHosts` refuse the same way). One check, an
 * `onRequest` hook of the context fastify-actions serves, so every route (the endpoint, per-action
 * routes, OpenAPI, the page, MCP, status, custom routes with createServer) gets it.
 */

export interface HostsPluginOptions {
  /** `rest.allowedHosts`; undefined when not configured (then only a loopback-bound server checks). */
  allowedHosts?: readonly string[]
}

/** The loopback names: `localhost` and `*.localhost` (RFC 6761: they always resolve to loopback). */
function isLoopbackName(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost')
}

/** A loopback address: 127.0.0.0/8, ::1, and IPv4-mapped 127.x. */
export function isLoopbackAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address
  if (isIP(bare) === 4) return bare.startsWith('127.')
  if (isIP(bare) !== 6) return false
  const lower = bare.toLowerCase()
  return lower === '::1' || lower === '0:0:0:0:0:0:0:1' || lower.startsWith('::ffff:127.')
}

/** The name of a Host header value, lower-cased, without its port (`[::1]:8000` → `[::1]`); undefined when unreadable. */
export function hostnameOf(host: string): string | undefined {
  const value = host.trim().toLowerCase()
  if (value === '') return undefined
  if (value.startsWith('[')) {
    const end = value.indexOf(']')
    if (end === -1) return undefined
    const rest = value.slice(end + 1)
    return rest === '' || /^:\d*$/.test(rest) ? value.slice(0, end + 1) : undefined
  }
  const colon = value.indexOf(':')
  const name = colon === -1 ? value : value.slice(0, colon)
  if (colon !== -1 && !/^\d*$/.test(value.slice(colon + 1))) return undefined
  // A trailing dot names the same host (`localhost.`).
  return name.endsWith('.') ? name.slice(0, -1) : name
}

/** True for `localhost`, `*.localhost`, 127.x, `[::1]`. */
export function isLoopbackHost(hostname: string): boolean {
  return isLoopbackName(hostname) || isLoopbackAddress(hostname)
}

/**
 * Compiles `rest.allowedHosts`: exact names (`api.example.com`), a leading dot for a domain and its
 * subdomains (`.example.com`), `'*'` for any Host. Loopback names are always allowed.
 */
export function compileAllowedHosts(list: readonly string[]): (hostname: string) => boolean {
  if (list.includes('*')) return () => true
  const exact = new Set<string>()
  const suffixes: string[] = []
  for (const entry of list) {
    const name = entry.trim().toLowerCase()
    if (name.startsWith('.')) {
      suffixes.push(name)
      exact.add(name.slice(1))
    } else exact.add(hostnameOf(name) ?? name)
  }
  return (hostname) => isLoopbackHost(hostname) || exact.has(hostname) || suffixes.some((suffix) => hostname.endsWith(suffix))
}

/**
 * True when `origin` (an `Origin` header) is the request's own: same scheme, same host and port
 * (default ports folded, as browsers write them). `null` and unparsable origins are never.
 */
export function isSameOrigin(origin: string, request: FastifyRequest): boolean {
  try {
    const from = new URL(origin)
    const own = new URL(`${request.protocol}://${request.host}`)
    return from.protocol === own.protocol && from.host === own.host
  } catch {
    return false
  }
}

/** Whether an address the server listens on is a loopback one. */
function boundToLoopback(address: ReturnType<FastifyInstance['server']['address']>): boolean {
  return address !== null && typeof address === 'object' && isLoopbackAddress(address.address)
}

/**
 * The hook: with `allowedHosts` configured every request is checked against it; otherwise only a
 * server bound to a loopback address checks (loopback names and addresses). A request without a Host
 * (HTTP/1.0, a load balancer's health check) is served: a browser always sends one.
 */
export function setupHosts(app: FastifyInstance, { allowedHosts }: HostsPluginOptions): void {
  const allowed = compileAllowedHosts(allowedHosts ?? [])
  const configured = allowedHosts !== undefined
  // Decided when the server starts listening (never while it does not: app.inject, app.fetch).
  let loopback = boundToLoopback(app.server.address())
  app.server.on('listening', () => (loopback = boundToLoopback(app.server.address())))
  // The verdict of the last Host seen: a server's requests nearly all carry the same one.
  let lastHost = ''
  let lastAllowed = false
  app.addHook('onRequest', function checkHost(request: FastifyRequest, reply: FastifyReply, done: () => void) {
    if (!configured && !loopback) return done()
    const host = request.host
    if (host === undefined || host === '') return done()
    if (host !== lastHost) {
      const hostname = hostnameOf(host)
      lastAllowed = hostname !== undefined && allowed(hostname)
      lastHost = host
    }
    if (lastAllowed) return done()
    sendFailure(reply, fail.hostNotAllowed())
  })
}

/** The Host allowlist as the plugin `fastify-actions-hosts`. */
export const hostsPlugin = concern('hosts', async (app, options: HostsPluginOptions) => setupHosts(app, options), { dependencies: ['errors'] })
