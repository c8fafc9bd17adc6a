import type { FastifyReply } from 'fastify'
import { failureData, logFault, statusOf, type WireAnswer } from '../lib/answer.js'
import { errorEnvelope, type ExternalResponse } from '../lib/envelope.js'
import type { Failure } from '../lib/errors.js'
import type { ErrResult } from '../lib/result.js'

/*
 * The codec's answers (lib/answer.ts) on a Fastify reply: the one way the HTTP adapters write the wire.
 */

/** Thrown from a hook (the rate limiter's 429): the error handler answers the failure it carries. */
export class FailureError extends Error {
  constructor(readonly failure: Failure) {
    super(failure.error)
  }
}

/**
 * Sets the answer's status (its fault logged, its JSON type set when a serializer wrote the text) and
 * returns the body for Fastify to send: the serializer's text, or the envelope (the reply serializer writes it).
 */
export function replyWith(reply: FastifyReply, answer: WireAnswer): ExternalResponse | string {
  logFault(reply.log, answer.fault)
  reply.code(answer.status)
  if (answer.json === undefined) return answer.envelope
  reply.type('application/json; charset=utf-8')
  return answer.json
}

/** Answers an `Err` with its status and its envelope (a handler's own `Err`: 400, `data: {}`). */
export function sendFailure(reply: FastifyReply, failure: ErrResult<string>): FastifyReply {
  return reply.send(failureAnswer(reply, failure))
}

/** Sets a failure's status and returns its envelope, for a handler that hands its answer back to Fastify. */
export function failureAnswer(reply: FastifyReply, failure: ErrResult<string>): ExternalResponse {
  reply.code(statusOf(failure))
  return errorEnvelope(failure.error, failureData(failure))
}
