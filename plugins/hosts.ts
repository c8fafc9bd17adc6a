import { isIP } from 'node:net'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { fail } from '../lib/errors.js'
import { sendFailure } from './wire.js'
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

/** More than one Host field (Node keeps the first and drops the rest): RFC 9112 §3.2 answers 400. */
function hasTwoHosts(rawHeaders: string[]): boolean {
  let seen = false
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = rawHeaders[index]!
    if (name.length === 4 && name.toLowerCase() === 'host') {
      if (seen) return true
      seen = true
    }
  }
  return false
}

/** The authority of an absolute-form target (`POST http://a.example/api/…`): RFC 9112 §3.2.2 makes it the host. */
function absoluteFormAuthority(url: string): string | undefined {
  if (url.charCodeAt(0) === 47 /* / */) return undefined
  const match = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(url)
  if (!match) return undefined
  const authority = match[1]!
  return authority.slice(authority.lastIndexOf('@') + 1)
}

/**
 * The Hosts a request must pass: the one it names (an absolute-form target's authority replaces the
 * Host header), and `request.host` when that differs (Fastify reads `X-Forwarded-Host` only from a peer
 * `trustProxy` trusts). From a trusted proxy the forwarded one alone, unless `trustProxy` is `true`:
 * that trusts every peer, so any client could name the forwarded Host: its own must pass too.
 */
function hostsToCheck(request: FastifyRequest, trustsEveryPeer: boolean): string[] {
  const raw = request.headers.host ?? ''
  const named = absoluteFormAuthority(request.url) ?? raw
  const forwarded = request.host
  if (forwarded === raw || forwarded === '' || forwarded === undefined) return named === '' ? [] : [named]
  return trustsEveryPeer && named !== '' ? [forwarded, named] : [forwarded]
}

/** Whether the app's `trustProxy` is `true` (every peer a proxy): Fastify keeps its options under a symbol. */
export function trustsEveryPeer(app: FastifyInstance): boolean {
  for (let object: object | null = app; object !== null; object = Object.getPrototypeOf(object)) {
    const key = Object.getOwnPropertySymbols(object).find((symbol) => symbol.description === 'fastify.options')
    if (key) return (object as Record<symbol, { trustProxy?: unknown } | undefined>)[key]?.trustProxy === true
  }
  return false
}

/**
 * The hook: two Host headers are a 400 on every server. With `allowedHosts` configured every request
 * is checked against it; otherwise only a server bound to a loopback address checks (loopback names
 * and addresses). A request without a Host (HTTP/1.0, a load balancer's health check) is served: a
 * browser always sends one.
 */
export function setupHosts(app: FastifyInstance, { allowedHosts }: HostsPluginOptions): void {
  const allowed = compileAllowedHosts(allowedHosts ?? [])
  const configured = allowedHosts !== undefined
  const everyPeer = trustsEveryPeer(app)
  // Decided when the server starts listening (never while it does not: app.inject, app.fetch).
  let loopback = boundToLoopback(app.server.address())
  app.server.on('listening', () => (loopback = boundToLoopback(app.server.address())))
  // The verdicts of the Hosts seen last: a server's requests nearly all carry the same ones.
  const verdicts = new Map<string, boolean>()
  const isAllowed = (host: string): boolean => {
    let verdict = verdicts.get(host)
    if (verdict === undefined) {
      const hostname = hostnameOf(host)
      verdict = hostname !== undefined && allowed(hostname)
      if (verdicts.size >= 64) verdicts.clear()
      verdicts.set(host, verdict)
    }
    return verdict
  }
  app.addHook('onRequest', function checkHost(request: FastifyRequest, reply: FastifyReply, done: () => void) {
    if (hasTwoHosts(request.raw.rawHeaders)) return sendFailure(reply, fail.badRequest())
    if (!configured && !loopback) return done()
    for (const host of hostsToCheck(request, everyPeer)) {
      if (!isAllowed(host)) return sendFailure(reply, fail.hostNotAllowed())
    }
    done()
  })
}

/** The Host allowlist as the plugin `fastify-actions-hosts`. */
export const hostsPlugin = concern('hosts', async (app, options: HostsPluginOptions) => setupHosts(app, options), { dependencies: ['errors'] })
