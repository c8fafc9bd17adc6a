import type { IncomingMessage, Server, ServerResponse } from 'node:http'

/** Marks a request whose body is to be thrown away: no `100 Continue` invites the client to send it. */
const withheld = Symbol('fastify-actions.withholdContinue')
const installed = new WeakSet<object>()

/**
 * `Expect: 100-continue` (RFC 9110 10.1.1): Node answers `100 Continue` before any route sees the
 * request, so a client whose declared body is over the limit uploads it for nothing before its 413.
 * Here the interim answer waits until something reads the body: a request refused first (a
 * `Content-Length` over the route's body limit, a 401 before the body, a 404) gets its final answer
 * alone, and Node then closes the connection, as it does for an expectation it did not meet.
 */
export function continueWhenRead(server: Server): void {
  // Node's HTTP/1 servers only (HTTP/2 has its own flow), once per server, never over the host's own listener.
  if (installed.has(server) || server.listenerCount('checkContinue') > 0 || typeof (server as Partial<Server>).closeIdleConnections !== 'function') return
  installed.add(server)
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    const read = request._read
    request._read = function (size: number) {
      request._read = read
      if (!response.headersSent && !(request as unknown as Record<symbol, unknown>)[withheld]) response.writeContinue()
      return read.call(this, size)
    }
    server.emit('request', request, response)
  })
}

/** Before reading a body only to discard it: the client is not asked to send it. */
export function withholdContinue(request: IncomingMessage): void {
  ;(request as unknown as Record<symbol, unknown>)[withheld] = true
}
