import { Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { answerOf, logFault } from '../lib/answer.js'
import { abortReasons } from '../lib/cancellation.js'
import { toJson, type ExternalRequest, type ExternalResponse } from '../lib/envelope.js'
import type { Engine } from '../lib/engine.js'
import { codeOf, fail } from '../lib/errors.js'
import { messages } from '../lib/messages.js'
import { outsideRequestScope, type ServerContext } from '../lib/context.js'
import type { CompiledAction } from '../lib/registry.js'
import type { Result } from '../lib/result.js'
import { END_EVENT_ID, eventIdOf, eventIdProblem, eventValueOf, isActionStream, stepsOf, type ActionStream, type StreamSteps } from '../lib/stream.js'
import type { ResolvedStreams } from './stream-config.js'
import { requestStoreOf } from './request-scope.js'
import { failureAnswer, replyWith } from './wire.js'

/*
 * Streaming actions over Server-Sent Events (the WHATWG format). The wire format is fixed (the typed
 * client and docs/streaming.md code against it):
 *   the start:   `retry: <ms>\n\n` (the client's reconnection delay); a `resumable` action's adds a
 *                comment, `retry: <ms>\n: resumable\n\n` (the typed client resumes only those)
 *   each event:  `id: <n>\nevent: message\ndata: <one-line JSON>\n\n` (n from 0, or the handler's `withEventId`)
 *   the end:     `id: end\nevent: done\ndata: <the success envelope of the final value>\n\n`
 *   a failure:   `id: end\nevent: error\ndata: <the envelope the same failure answers as JSON>\n\n`
 *                (no `id` when the server shuts down: the client may resume elsewhere)
 *   idle:        `: keep-alive\n\n` every `rest.streams.keepAlive` ms of silence
 */

export const SSE_HEADERS = Object.freeze({
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  // nginx buffers responses unless told not to.
  'x-accel-buffering': 'no',
})

const KEEP_ALIVE = ': keep-alive\n\n'

/** The reconnection delay (ms) every stream announces first (`retry:`). */
export const STREAM_RETRY = 3000
const RETRY = `retry: ${STREAM_RETRY}\n\n`
/** A `resumable` action's start: the comment tells the typed client it may resume the stream (docs/client.md#streaming-actions). */
const RETRY_RESUMABLE = `retry: ${STREAM_RETRY}\n: resumable\n\n`

/**
 * The `Date` header of a stream, set by sendStream. Node formats its own when the headers are written,
 * which for a stream is at its first event, in the execution's scope: the timer that empties Node's
 * once-a-second cache then carries that scope, and through it the request and its body, past the end
 * of the stream on a keep-alive connection (test/retention.test.ts). Cached per second, with no timer.
 */
let dateSecond = -1
let dateText = ''
function httpDate(): string {
  const second = Math.floor(Date.now() / 1000)
  if (second !== dateSecond) {
    dateSecond = second
    dateText = new Date(second * 1000).toUTCString()
  }
  return dateText
}

/** Characters of events gathered before they are written without waiting for the end of the turn. */
const FLUSH_AT = 8 * 1024

/**
 * Bytes read ahead of the socket: the generator is not pulled while this much waits unsent. Small, so
 * a slow reader costs the server at most this plus the socket's own buffers (test/streams-socket).
 */
export const STREAM_HIGH_WATER_MARK = 16 * 1024

/**
 * Whether the request accepts `text/event-stream` as HTTP content negotiation defines it (RFC 9110
 * 12.5.1): no `Accept` (or one listing no media range) accepts anything; otherwise the most specific
 * range that matches (`text/event-stream`, then `text/*`, then `*\/*`) decides, and a weight of 0
 * (`q=0`) refuses. `application/json` alone has no matching range: refused.
 */
export function acceptsEventStream(request: FastifyRequest): boolean {
  const accept = request.headers.accept
  if (typeof accept !== 'string') return true
  // The weight of the best match at each level of specificity: exact, `text/*`, `*/*`.
  const weights: [number, number, number] = [-1, -1, -1]
  let ranges = 0
  for (const range of accept.toLowerCase().split(',')) {
    const [type, ...parameters] = range.split(';')
    const media = type.trim()
    if (media === '') continue
    ranges++
    const level = media === 'text/event-stream' ? 0 : media === 'text/*' ? 1 : media === '*/*' ? 2 : -1
    if (level === -1) continue
    weights[level] = Math.max(weights[level], weightOf(parameters))
  }
  if (ranges === 0) return true
  const decisive = weights.find((weight) => weight !== -1)
  return decisive !== undefined && decisive > 0
}

/** A media range's `q` (1 when absent; a malformed one counts as 0, as it says nothing we can honour). */
function weightOf(parameters: string[]): number {
  for (const parameter of parameters) {
    const [name, value] = parameter.split('=')
    if (name.trim() !== 'q') continue
    const weight = Number(value?.trim())
    return value !== undefined && value.trim() !== '' && weight >= 0 && weight <= 1 ? weight : 0
  }
  return 1
}

/**
 * The last frame: `done` with the success envelope of the final value, or `error` with the envelope
 * the same failure answers as JSON. The codec decides both, and whether to log (lib/answer.ts).
 */
function finalFrame(reply: FastifyReply, result: Result<unknown, string>, entry: CompiledAction): string {
  const answer = answerOf(result, entry)
  logFault(reply.log, answer.fault)
  return `event: ${answer.envelope.status ? 'done' : 'error'}\ndata: ${answer.json ?? toJson(answer.envelope) ?? 'null'}\n\n`
}

/** The open streams of one app: closed with an error event when it shuts down. */
export interface StreamRegistry {
  readonly open: Set<ActionStream>
  /** Open streams per client key. */
  readonly perClient: Map<string, number>
  closing: boolean
}

export function createStreamRegistry(app: FastifyInstance): StreamRegistry {
  const registry: StreamRegistry = { open: new Set(), perClient: new Map(), closing: false }
  // Before the server stops accepting and waits for in-flight responses: a stream never ends by itself.
  app.addHook('preClose', (done) => {
    registry.closing = true
    for (const stream of registry.open) stream.close(fail.shuttingDown(), abortReasons.shutdown)
    done()
  })
  return registry
}

export interface SendStreamOptions {
  /** The action's table entry: its name, its event writer, its declared errors. */
  entry: CompiledAction
  settings: ResolvedStreams
  registry: StreamRegistry
  /** The client key counted against `maxPerClient`, when rate limiting gives one: its slot was taken by `reserveStreamSlot`, released when the stream ends. */
  clientKey?: string
  /** When (ms since the epoch) the token that opened the stream expires: the stream ends then, with a 401 `error` event. */
  expiresAt?: number
}

/**
 * Answers with the stream: the SSE headers, then a Readable that pulls the next event only when
 * Fastify asks for more (the socket drained), so a slow reader never makes the server buffer.
 */
export function sendStream(reply: FastifyReply, stream: ActionStream, options: SendStreamOptions): FastifyReply {
  const response = new StreamResponse(reply, stream, options)
  reply.code(200).headers(SSE_HEADERS)
  if (reply.raw.sendDate && !reply.hasHeader('date')) reply.header('date', httpDate())
  response.body.push(options.entry.action.resumable === true ? RETRY_RESUMABLE : RETRY)
  // Sent outside the request scope (the endpoint's routes have no hook that moves the write out of it:
  // plugins/request-scope.ts, `scopesItsExecution`).
  return outsideRequestScope(() => reply.send(response.body))
}

/**
 * One stream on its way out: the Readable Fastify sends, the timers that bound it (keep-alive, the
 * longest duration, the token's expiry), the events of the current turn waiting to be written, and
 * its end, written once however it comes.
 */
class StreamResponse {
  readonly body: Readable
  /** `next()` in parts: one microtask per event (lib/stream.ts, StreamSteps). */
  private readonly steps: StreamSteps
  /** The sequence number of the next event without an id of its own. */
  private id = 0
  private pulling = false
  /** Whether an event went out since the last keep-alive tick. */
  private wrote = false
  private finished = false
  /** Events of this turn not yet pushed (see `queue`), and whether their flush is scheduled. */
  private pending = ''
  private flushing = false
  private readonly keepAlive: NodeJS.Timeout
  private readonly deadline: NodeJS.Timeout
  private readonly expiry: NodeJS.Timeout | undefined

  constructor(
    private readonly reply: FastifyReply,
    private readonly stream: ActionStream,
    private readonly options: SendStreamOptions,
  ) {
    const { entry, settings, registry } = options
    this.steps = stepsOf(stream)
    registry.open.add(stream)
    this.keepAlive = setInterval(this.tick, settings.keepAlive)
    this.keepAlive.unref()
    this.deadline = setTimeout(() => stream.close(fail.streamDuration(entry.name, settings.maxDuration), abortReasons.timeout(settings.maxDuration)), settings.maxDuration)
    this.deadline.unref()
    // A stream's identity stays valid: it ends when the token that opened it expires (before maxDuration).
    const untilExpiry = options.expiresAt === undefined ? Infinity : Math.max(0, options.expiresAt - Date.now())
    this.expiry = untilExpiry < settings.maxDuration ? setTimeout(() => stream.close(fail.auth(messages.authReasons.expired)), untilExpiry) : undefined
    this.expiry?.unref()
    // The end, however it comes (the last event, a throw, the silence timeout, close): written once,
    // outside the request scope (what Node arms once a response ends, the keep-alive timer, would keep
    // the request alive on an open connection).
    outsideRequestScope(() => void stream.result.then(this.settled))
    this.body = this.createBody()
  }

  private createBody(): Readable {
    const response = this
    return new Readable({
      highWaterMark: STREAM_HIGH_WATER_MARK,
      encoding: 'utf8',
      read() {
        // The pulls run in the execution's scope, entered once per batch (every event until the buffer
        // is full), not once per event: the generator's code after each `yield` resumes in it.
        if (!response.pulling && !response.finished) void response.steps.enter(response.pull)
      },
      destroy(error, callback) {
        // The client went away (or the response failed): end the action, run its `finally`.
        response.release()
        if (!response.finished) response.stream.close(undefined, abortReasons.disconnected)
        callback(error)
      },
    })
  }

  /** Every `keepAlive` ms: a comment line when nothing went out since the last tick. */
  private readonly tick = () => {
    if (!this.wrote && this.body.readableLength === 0 && !this.finished) this.body.push(KEEP_ALIVE)
    this.wrote = false
  }

  private release(): void {
    clearInterval(this.keepAlive)
    clearTimeout(this.deadline)
    clearTimeout(this.expiry)
    const { registry, clientKey } = this.options
    if (registry.open.delete(this.stream)) releaseStreamSlot(registry, clientKey)
  }

  /** The stream's result: its final frame, with the end's id (a shutdown is no end of the action's). */
  private readonly settled = (result: Result<unknown, string>) => {
    if (this.finished || this.body.destroyed) return
    const text = finalFrame(this.reply, result, this.options.entry)
    // The end's id tells a reconnecting client it is over (204).
    this.end(!result.ok && codeOf(result) === 'FA_ERR_SHUTTING_DOWN' ? text : `id: ${END_EVENT_ID}\n${text}`)
  }

  private end(text: string): void {
    this.finished = true
    this.release()
    this.flush()
    this.body.push(text)
    this.body.push(null)
    // Every stream ends: a reader that does not take the final event in time loses its socket
    // (a paused reader would otherwise hold the stream, its buffers and `close()` for ever).
    const response = this.reply.raw
    if (response.writableFinished || response.destroyed) return
    const expire = setTimeout(() => response.writableFinished || response.destroy(), this.options.settings.endTimeout)
    expire.unref()
    response.once('close', () => clearTimeout(expire))
  }

  /**
   * Pulls events until the buffer is full or the stream ends. `read()` asks before it takes what it
   * reads out of the buffer: its first pull is always due. Never pulls again while the buffer is full,
   * whatever the generator awaited since the last check: `read()` is called again once the socket
   * drained it. The bound: the high-water mark plus one event.
   */
  private readonly pull = async (): Promise<void> => {
    this.pulling = true
    try {
      for (let first = true; ; first = false) {
        if (this.steps.ended()) return
        if (!first && this.body.readableLength + this.pending.length >= STREAM_HIGH_WATER_MARK) {
          this.flush()
          return
        }
        let step: IteratorResult<unknown>
        try {
          step = this.steps.onStep(await this.steps.begin())
        } catch (error) {
          step = this.steps.onThrow(error)
        }
        if (step.done || this.finished || this.body.destroyed) return
        const frame = this.frameOf(step.value)
        if (frame === undefined || !this.queue(frame)) return
      }
    } finally {
      this.pulling = false
    }
  }

  /**
   * The `message` frame of an event, or undefined when its `output` schema cannot write it (or its id
   * would break the framing): then the stream ends with the 500's envelope, logged.
   */
  private frameOf(event: unknown): string | undefined {
    let data: string
    const given = eventIdOf(event)
    const problem = given === undefined ? undefined : eventIdProblem(given)
    try {
      if (problem) throw new Error(problem)
      data = this.options.entry.writeEvent!(eventValueOf(event))
    } catch (error) {
      this.stream.close(fail.outputMismatch(this.options.entry.name, (error as Error).message))
      return undefined
    }
    this.wrote = true
    const eventId = given ?? String(this.id)
    this.id++
    return `id: ${eventId}\nevent: message\ndata: ${data}\n\n`
  }

  /**
   * Queues a frame; false when the pull should stop (the buffer is full). The events made in one turn
   * of the event loop (a generator that does not wait between its yields makes many) go out as one
   * write: flushed once the turn's promise jobs are done (`process.nextTick` runs after them, as
   * Node's own cork of an http response does), or at once when `FLUSH_AT` waits. No event waits past
   * its turn, and the bound on what is read ahead holds.
   */
  private queue(frame: string): boolean {
    this.pending += frame
    if (this.pending.length >= FLUSH_AT) return this.flush()
    if (!this.flushing) {
      this.flushing = true
      process.nextTick(this.flushLater)
    }
    return true
  }

  private flush(): boolean {
    const text = this.pending
    this.pending = ''
    return text === '' || this.body.push(text)
  }

  private readonly flushLater = () => {
    this.flushing = false
    if (!this.finished && !this.body.destroyed) this.flush()
  }
}

/**
 * Takes one of the client key's `maxPerClient` slots, before the gate runs (auth, hooks, validation
 * may await: counting only once the stream starts let parallel requests all pass the check); false
 * when the key already holds `max`. The caller releases it unless the stream starts.
 */
export function reserveStreamSlot(registry: StreamRegistry, clientKey: string | undefined, max: number): boolean {
  if (clientKey === undefined) return true
  const count = registry.perClient.get(clientKey) ?? 0
  if (count >= max) return false
  registry.perClient.set(clientKey, count + 1)
  return true
}

export function releaseStreamSlot(registry: StreamRegistry, clientKey: string | undefined): void {
  if (clientKey === undefined) return
  const count = (registry.perClient.get(clientKey) ?? 1) - 1
  if (count <= 0) registry.perClient.delete(clientKey)
  else registry.perClient.set(clientKey, count)
}

/** What the SSE adapter needs to serve the streaming actions of one endpoint. */
export interface StreamDispatchOptions {
  engine: Engine
  context: ServerContext<any>
  settings: ResolvedStreams
  /** The client key of a request (the rate limiter's), for `settings.maxPerClient`; none without rate limiting. */
  clientKey?: (request: FastifyRequest) => string
}

/** A streaming action's answer: the reply (the stream sends itself), or a refusal's body for Fastify to send. */
type StreamAnswer = FastifyReply | ExternalResponse | string

/**
 * The SSE adapter's dispatch of a streaming action (the endpoint hands it every one): refused as JSON
 * before its first byte (no `Accept: text/event-stream`, too many open streams, shutting down, or any
 * refusal of the pipeline's gate), else answered as SSE. It owns the open streams, the slots per
 * client, keep-alive and deadlines. Undefined when the action table holds no streaming action.
 */
export function createStreamDispatch(app: FastifyInstance, options: StreamDispatchOptions) {
  const { engine, context, settings } = options
  if (!engine.table.entries.some((entry) => entry.stream)) return undefined
  const registry = createStreamRegistry(app)
  return function dispatchStream(reply: FastifyReply, request: ExternalRequest, entry: CompiledAction): StreamAnswer | Promise<StreamAnswer> {
    const { service, action, payload } = request
    if (!acceptsEventStream(reply.request)) return failureAnswer(reply, fail.notAcceptable(entry.name))
    if (registry.closing) return failureAnswer(reply, fail.shuttingDown())
    const lastEventId = resumeFrom(reply.request)
    // A reconnecting client (`Last-Event-ID`): 204 stops it (WHATWG) when its stream had ended, or
    // when the action cannot resume: a standard client never runs an action twice that did not opt in.
    if (lastEventId !== undefined && (lastEventId === END_EVENT_ID || entry.action.resumable !== true)) return reply.code(204).send()
    const clientKey = options.clientKey?.(reply.request)
    if (!reserveStreamSlot(registry, clientKey, settings.maxPerClient)) return failureAnswer(reply, fail.tooManyStreams(settings.maxPerClient))
    // The slot is held while the gate runs; sendStream owns it once the stream starts.
    let held = true
    const free = () => {
      if (held) releaseStreamSlot(registry, clientKey)
      held = false
    }
    const started = (result: Result<unknown, string>): StreamAnswer => {
      if (!result.ok || !isActionStream(result.value)) {
        free()
        return replyWith(reply, answerOf(result, entry))
      }
      const stream = result.value
      // The client left while the gate ran (auth, hooks, validation): nothing to stream to.
      if (reply.raw.destroyed || registry.closing) {
        free()
        stream.close(registry.closing ? fail.shuttingDown() : undefined)
        return registry.closing ? failureAnswer(reply, fail.shuttingDown()) : reply
      }
      held = false
      const exp = store.auth?.claims.exp
      return sendStream(reply, stream, { entry, settings, registry, clientKey, expiresAt: typeof exp === 'number' ? exp * 1000 : undefined })
    }
    let outcome: ReturnType<Engine['execute']>
    const store = requestStoreOf(reply.request, reply, context)
    try {
      if (lastEventId !== undefined) store.lastEventId = lastEventId
      outcome = engine.execute(service, action, payload, context, { request: store })
    } catch (error) {
      free()
      throw error
    }
    return outcome instanceof Promise
      ? outcome.then(started, (error: unknown) => {
          free()
          throw error
        })
      : started(outcome)
  }
}

/** The `Last-Event-ID` of a reconnecting SSE client, or undefined (an empty one says nothing: WHATWG). */
function resumeFrom(request: FastifyRequest): string | undefined {
  const header = request.headers['last-event-id']
  const value = Array.isArray(header) ? header[0] : header
  return value === undefined || value === '' ? undefined : value
}
