import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import { failure } from '../lib/envelope.js'
import { messages } from '../lib/messages.js'
import type { Diagnostics } from '../lib/diagnostics.js'

interface ErrorAnswer {
  status: number
  message: string
  data: Record<string, unknown>
}

const invalidBodyCodes = new Set([
  'FST_ERR_CTP_EMPTY_JSON_BODY',
  'FST_ERR_CTP_INVALID_JSON_BODY',
  'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
  'FST_ERR_CTP_INVALID_TYPE',
])

/** Turns anything thrown while serving a request into the envelope it answers with. */
export function toErrorAnswer(error: FastifyError | Error): ErrorAnswer {
  const { code, statusCode } = error as FastifyError
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return { status: 413, message: messages.bodyTooLarge, data: {} }
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return { status: 415, message: messages.unsupportedMediaType, data: {} }
  if (invalidBodyCodes.has(code) || (error instanceof SyntaxError && statusCode === 400)) {
    return { status: 400, message: messages.invalidBody, data: {} }
  }
  if (code === 'FST_ERR_BAD_URL') return { status: 400, message: messages.badUrl, data: {} }
  if (code === 'FST_ERR_VALIDATION') {
    const validation = (error as FastifyError).validation ?? []
    const errors = validation.map((issue) => ({ path: issue.instancePath, message: issue.message ?? '' }))
    return { status: 400, message: messages.validationFailed, data: { errors } }
  }
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    return { status: statusCode, message: error.message, data: {} }
  }
  if (typeof statusCode === 'number' && statusCode > 500 && statusCode < 600) {
    const exposed = (error as { expose?: unknown }).expose === true
    return { status: statusCode, message: exposed ? error.message : messages.internal, data: {} }
  }
  return { status: 500, message: messages.internal, data: {} }
}

export interface ErrorEnvelopeOptions {
  baseUrl: string
  diagnostics: Diagnostics
}

/**
 * The error and 404 envelopes, installed on the root before any plugin: Fastify fixes a route's
 * error handler when the route is defined, so one installed later would miss the built-in routes.
 */
export function installErrorEnvelope(app: FastifyInstance, { baseUrl, diagnostics }: ErrorEnvelopeOptions): void {
  const notFound = failure(messages.routeNotFound(baseUrl))
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const answer = toErrorAnswer(error)
    if (answer.status >= 500) {
      diagnostics.error('rest.errorHandler', `${request.method} ${request.url}: ${error.message}`, { stack: error.stack })
    }
    // Headers set for the failed route (a content type, a content length) must not leak into the envelope.
    reply.removeHeader('content-length')
    reply.code(answer.status).type('application/json; charset=utf-8').send(failure(answer.message, answer.data))
  })
  app.setNotFoundHandler((_request, reply) => {
    reply.code(404).send(notFound)
  })
}

/** Fastify's `frameworkErrors` option: a malformed URL and the like still answer with the envelope. */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const answer = toErrorAnswer(error)
  reply.code(answer.status).send(failure(answer.message, answer.data))
}

const clientErrorStatus: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, messages.headersTooLarge],
  ERR_HTTP_REQUEST_TIMEOUT: [408, messages.requestTimeout],
}

/** Node's `clientError`: a request too broken for Fastify to see still gets a JSON envelope. */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy()
    return
  }
  const [status, message] = clientErrorStatus[error.code ?? ''] ?? [400, messages.badRequest]
  const reason = STATUS_CODES[status] ?? 'Bad Request'
  const body = JSON.stringify(failure(message))
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  )
}
