import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Socket } from 'node:net'
import type { Diagnostics } from '../lib/diagnostics.js'
import { errorEnvelope } from '../lib/envelope.js'
import { fail, type Failure } from '../lib/errors.js'
import { messages } from '../lib/messages.js'
import { authFailureOf } from './auth-errors.js'
import { statusOf } from '../lib/answer.js'
import { FailureError } from './wire.js'
import { concern } from './concern.js'

// Not `import { STATUS_CODES } from 'node:http'`: on Node 24 and 26 an ES import of node:http builds
// its namespace from every export, which runs http's lazy getters (WebSocket, CloseEvent, …) and loads
// Node's bundled undici, worker_threads and the web streams: about 15 MiB of RSS no request uses
// (docs/benchmarks.md, "Peak RSS under load"). The CommonJS object leaves the getters alone.
const { STATUS_CODES } = process.getBuiltinModule('node:http')

/** What a request that threw answers: a coded failure, or an HTTP error's own status and message. */
type ErrorAnswer = Failure | { status: number; message: string }

const invalidBodyCodes = new Set([
  'FST_ERR_CTP_EMPTY_JSON_BODY',
  'FST_ERR_CTP_INVALID_JSON_BODY',
  'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
  'FST_ERR_CTP_INVALID_TYPE',
])

/** Turns anything thrown while serving a request into the answer it gets. */
export function toErrorAnswer(error: FastifyError | Error): ErrorAnswer {
  const { code, statusCode } = error as FastifyError
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return fail.bodyTooLarge()
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return fail.unsupportedMediaType()
  if (invalidBodyCodes.has(code) || (error instanceof SyntaxError && statusCode === 400)) return fail.invalidBody()
  if (code === 'FST_ERR_BAD_URL') return fail.badUrl()
  if (code === 'FST_ERR_VALIDATION') {
    const validation = (error as FastifyError).validation ?? []
    return fail.validation(validation.map((issue) => ({ path: issue.instancePath, message: issue.message ?? '' })))
  }
  // `request.jwtVerify()` in a custom route: the same 401 as a protected action, not @fastify/jwt's 400.
  const auth = authFailureOf(error)
  if (auth) return auth
  if (error instanceof FailureError) return error.failure
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) return { status: statusCode, message: error.message }
  if (typeof statusCode === 'number' && statusCode > 500 && statusCode < 600) {
    // A 5xx keeps its status; its text is sent only when the error says it may be (`expose`).
    const exposed = (error as { expose?: unknown }).expose === true
    return { status: statusCode, message: exposed ? error.message : messages.internal }
  }
  return fail.internal()
}

function answerOf(answer: ErrorAnswer): { status: number; message: string; data: Record<string, unknown>; code?: string } {
  if ('ok' in answer) return { status: statusOf(answer), message: answer.error, data: answer.data, code: answer.code }
  return { ...answer, data: {} }
}

export interface ErrorEnvelopeOptions {
  /** The base URL the 404 message names, prefix included. */
  baseUrl: string
  diagnostics: Diagnostics
  /** Whether to answer unmatched routes of this prefix with the 404 envelope. */
  notFound: boolean
}

/** A 5xx's real error: in Fastify's log (with the request id) and the diagnostics, never in the answer. */
function logServerError(request: FastifyRequest, error: Error, status: number, code: string | undefined, diagnostics: Diagnostics): void {
  const errorCode = (error as { code?: unknown }).code
  request.log.error({ err: error, code, errorCode, statusCode: status }, `${request.method} ${request.url}: ${error.message}`)
  diagnostics.error('rest.errorHandler', `${request.method} ${request.url}: ${error.message}`, { stack: error.stack, code, errorCode })
}

/**
 * The error and 404 envelopes, installed before any route of the context they serve: Fastify
 * fixes a route's error handler when the route is defined, so one installed later would miss them.
 */
export function installErrorEnvelope(app: FastifyInstance, { baseUrl, diagnostics, notFound: answerNotFound }: ErrorEnvelopeOptions): void {
  const notFound = fail.routeNotFound(baseUrl)
  const notFoundBody = errorEnvelope(notFound.error)
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const answer = answerOf(toErrorAnswer(error))
    if (answer.status >= 500) logServerError(request, error, answer.status, answer.code, diagnostics)
    // Headers set for the failed route (a content type, a content length) must not leak into the envelope.
    reply.removeHeader('content-length')
    reply.code(answer.status).type('application/json; charset=utf-8').send(errorEnvelope(answer.message, answer.data))
  })
  if (!answerNotFound) return
  app.setNotFoundHandler((_request, reply) => {
    reply.code(statusOf(notFound)).send(notFoundBody)
  })
}

/** Fastify's `frameworkErrors` option: a malformed URL and the like still answer with the envelope. */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const answer = answerOf(toErrorAnswer(error))
  reply.code(answer.status).send(errorEnvelope(answer.message, answer.data))
}

const clientErrorFailures: Record<string, () => Failure> = {
  HPE_HEADER_OVERFLOW: fail.headersTooLarge,
  ERR_HTTP_REQUEST_TIMEOUT: fail.requestTimeout,
}

/** Node's `clientError`: a request too broken for Fastify to see still gets a JSON envelope. */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy()
    return
  }
  const failure = (clientErrorFailures[error.code ?? ''] ?? fail.badRequest)()
  const status = statusOf(failure)
  const reason = STATUS_CODES[status] ?? 'Bad Request'
  const body = JSON.stringify(errorEnvelope(failure.error))
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  )
}

/** The error and 404 envelopes as the plugin `fastify-actions-errors`, registered before any route it serves. */
export const errorsPlugin = concern('errors', async (app, options: ErrorEnvelopeOptions) => installErrorEnvelope(app, options))
