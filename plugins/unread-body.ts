import type { FastifyReply, FastifyRequest } from 'fastify'
import { Socket } from 'node:net'
import { withholdContinue } from './expect-continue.js'

/** After an answer sent before the body was read to its end: how much more to read and throw away before closing. */
const LINGER_BYTES = 4 * 1024 * 1024
const LINGER_MS = 2000

/**
 * When the answer goes out before the body was read to its end: stop parsing, throw away what the
 * client still sends (so it can read the answer: closing a socket with unread input resets it),
 * and close the connection after LINGER_BYTES or LINGER_MS, whichever comes first. A body that
 * ends within them leaves the connection open for the next request.
 */
export function discardRest(request: FastifyRequest, reply: FastifyReply): void {
  const raw = request.raw
  withholdContinue(raw)
  raw.unpipe()
  // `inject` has no connection to manage; HTTP/1 only, where the socket is this request's alone.
  if (raw.complete || !(raw.socket instanceof Socket) || raw.httpVersionMajor !== 1) return
  let left = LINGER_BYTES
  let timer: NodeJS.Timeout | undefined
  const close = () => {
    done()
    raw.socket?.destroy()
  }
  const done = () => {
    clearTimeout(timer)
    raw.off('data', onData).off('end', done).off('close', done)
  }
  const onData = (chunk: Buffer) => {
    left -= chunk.length
    if (left < 0 && reply.raw.writableFinished) close()
  }
  raw.on('data', onData).once('end', done).once('close', done)
  reply.raw.once('finish', () => {
    if (raw.complete) return done()
    if (left < 0) return close()
    timer = setTimeout(close, LINGER_MS)
    timer.unref()
  })
  raw.resume()
}
