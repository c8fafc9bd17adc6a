import { abortReason, abortReasons, type Cancellation } from './cancellation.js'
import { fail } from './errors.js'
import { Err, Ok, isResult, type ErrResult, type Result } from './result.js'

const brand = Symbol.for('fastify-actions.stream')
const EVENT_ID = Symbol.for('fastify-actions.event-id')

/** The id a stream's final event carries: a client that sends it back as `Last-Event-ID` gets `204`. */
export const END_EVENT_ID = 'end'

/** An event with the id its handler gave it (`withEventId`). */
interface IdentifiedEvent {
  readonly [EVENT_ID]: string
  readonly value: unknown
}

/**
 * Yields `value` as an event whose SSE `id` is `id` instead of its sequence number: what a client
 * sends back as `Last-Event-ID` to resume a `resumable` stream (docs/streaming.md#resume). Typed as
 * `value` itself so the generator's event type stays the event's (the wrapper is taken off before any
 * consumer sees it). An id is one line: no line break or NUL, and not `end` (the final event's).
 */
export function withEventId<T>(id: string | number, value: T): T {
  return { [EVENT_ID]: String(id), value } satisfies IdentifiedEvent as unknown as T
}

/** The id `withEventId` gave an event, or undefined. */
export function eventIdOf(event: unknown): string | undefined {
  return typeof event === 'object' && event !== null && EVENT_ID in event ? (event as IdentifiedEvent)[EVENT_ID] : undefined
}

/** An event without its `withEventId` wrapper. */
export function eventValueOf(event: unknown): unknown {
  return typeof event === 'object' && event !== null && EVENT_ID in event ? (event as IdentifiedEvent).value : event
}

/** Why an event id cannot be sent (it would break the SSE framing or mark the end), or undefined. */
export function eventIdProblem(id: string): string | undefined {
  if (/[\r\n\0]/.test(id)) return 'an event id may not contain a line break or NUL'
  if (id === END_EVENT_ID) return `the event id '${END_EVENT_ID}' marks the end of a stream`
  return undefined
}

/**
 * What `engine.executeAction` gives, as its `Ok` value, for a streaming action whose gate passed
 * (auth, the global before handler, the before hooks, validation): the events, pulled one at a time.
 * One consumer iterates it once. The iteration never throws: a failure ends it, and `result` holds it.
 */
export interface ActionStream<TEvent = unknown, TFinal = unknown> extends AsyncIterable<TEvent> {
  readonly [brand]: true
  /** `service.action` */
  readonly name: string
  /** The execution's signal (the handler's `context.signal`). */
  readonly signal: AbortSignal
  /**
   * Settles once the stream ended, never rejects: `Ok(final value)` (after the after hooks and the
   * global after handler) or the `Err` that ended it (a throw, an `Err` returned by the generator,
   * the silence timeout, or the failure given to `close`).
   */
  readonly result: Promise<Result<TFinal, string>>
  /**
   * Ends the stream early: aborts `signal` (its reason says `why`, default: the stream was closed),
   * calls the generator's `return()` (its `finally` blocks run once its pending `await` settles) and
   * settles `result` with `failure` (default: an `Err` saying the action was aborted).
   */
  close(failure?: ErrResult<string>, why?: string): void
}

export function isActionStream(value: unknown): value is ActionStream {
  return typeof value === 'object' && value !== null && (value as { [brand]?: unknown })[brand] === true
}

/** What the engine gives a stream: how to end it, in the execution's scope. */
export interface StreamParts {
  name: string
  iterable: AsyncIterable<unknown>
  cancellation: Cancellation
  /** The longest silence (ms) while an event is awaited; undefined for none. */
  timeout?: number
  /** Re-enters the execution's scope (each pull runs the generator in it). */
  inScope: <R>(fn: () => R) => R
  /** The text of a thrown error (the specification: its message). */
  thrownMessage: (error: unknown) => string
  /** Runs the after hooks and the global after handler on the final value; never rejects. */
  finish: (result: Result<unknown, string>) => Promise<Result<unknown, string>>
}


const STEPS = Symbol('fastify-actions.stream.steps')

/**
 * The parts of `next()`, for a consumer in this package that awaits the generator's own promise (one
 * microtask per event, as `Readable.from` has) instead of the `then` that `next()` chains on it:
 *   `if (steps.ended()) stop; try { step = steps.onStep(await steps.begin()) } catch (e) { step = steps.onThrow(e) }`
 * and that pulls a batch of events inside `enter` (the execution's scope, entered once for the batch).
 */
export interface StreamSteps {
  ended(): boolean
  begin(): IteratorResult<unknown> | PromiseLike<IteratorResult<unknown>>
  onStep(step: IteratorResult<unknown, unknown>): IteratorResult<unknown>
  onThrow(error: unknown): IteratorResult<unknown>
  /** Runs `fn` in the execution's scope. */
  enter<R>(fn: () => R): R
}

export function stepsOf(stream: ActionStream): StreamSteps {
  return (stream as ActionStream & { [STEPS]: StreamSteps })[STEPS]
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined })

/** A step as the public iterator gives it: the event without its `withEventId` wrapper. */
const unwrapStep = (step: IteratorResult<unknown>): IteratorResult<unknown> =>
  step.done || eventIdOf(step.value) === undefined ? step : { done: false, value: eventValueOf(step.value) }

/**
 * The engine's half of a streaming execution (lib/engine.ts makes it once the gate passed). One pull
 * costs the generator's own promise and one `then`: no wrapper promise, no timer per event.
 */
export function createActionStream(parts: StreamParts): ActionStream {
  const execution = new StreamExecution(parts)
  const { next, close } = execution
  const stream: ActionStream & { [STEPS]: StreamSteps } = {
    [brand]: true,
    [STEPS]: execution,
    name: parts.name,
    get signal() {
      return parts.cancellation.signal
    },
    result: execution.result,
    close,
    [Symbol.asyncIterator]() {
      return {
        next,
        async return() {
          close()
          return DONE
        },
      }
    },
  }
  return stream
}

/**
 * The state of one streaming execution: the generator's iterator, how it ended (`result`), and the
 * silence timeout. Its steps are `next()` in parts (StreamSteps), for the SSE adapter.
 */
class StreamExecution implements StreamSteps {
  readonly result: Promise<Result<unknown, string>>
  private settle!: (result: Result<unknown, string>) => void
  private iterator: AsyncIterator<unknown, unknown> | undefined
  private isEnded = false
  /** One timer for the whole stream, re-armed only when it fires early: no timer per event. */
  private timer: NodeJS.Timeout | undefined
  /** While a pull waits on the generator, and since when (for the silence timeout). */
  private waiting = false
  private pullStarted = 0

  constructor(private readonly parts: StreamParts) {
    this.result = new Promise<Result<unknown, string>>((resolve) => (this.settle = resolve))
    if (parts.timeout) this.arm(parts.timeout)
  }

  ended(): boolean {
    return this.isEnded
  }

  /** Runs `fn` in the execution's scope. */
  enter<R>(fn: () => R): R {
    return this.parts.inScope(fn)
  }

  /** Asks the generator for its next step, in the execution's scope; may throw synchronously. */
  readonly begin = (): IteratorResult<unknown> | PromiseLike<IteratorResult<unknown>> => {
    if (this.parts.timeout) {
      this.waiting = true
      this.pullStarted = Date.now()
    }
    return this.parts.inScope(this.pullNext)
  }

  private readonly pullNext = () => (this.iterator ??= this.parts.iterable[Symbol.asyncIterator]()).next()

  readonly onStep = (step: IteratorResult<unknown, unknown>): IteratorResult<unknown> => {
    this.waiting = false
    if (this.isEnded) return DONE
    if (!step.done) return step
    const final = step.value
    this.end(this.parts.finish(isResult(final) ? (final as Result<unknown, string>) : Ok(final)))
    return DONE
  }

  readonly onThrow = (error: unknown): IteratorResult<unknown> => {
    this.waiting = false
    if (this.isEnded) return DONE
    this.parts.cancellation.abort(abortReason(abortReasons.closed))
    // In the execution's scope: a consumer may pull from outside it (the answer is written outside the
    // request scope), and the text of a hidden error names the request's id (exposeErrors: false).
    this.end(this.parts.finish(Err(this.parts.inScope(() => this.parts.thrownMessage(error)))))
    return DONE
  }

  /** The public iterator's `next()`: the event without its `withEventId` wrapper. */
  readonly next = (): Promise<IteratorResult<unknown>> => {
    if (this.isEnded) return Promise.resolve(DONE)
    try {
      return Promise.resolve(this.begin()).then(this.onStep, this.onThrow).then(unwrapStep)
    } catch (error) {
      return Promise.resolve(this.onThrow(error))
    }
  }

  readonly close = (failure?: ErrResult<string>, why: string = abortReasons.closed): void => {
    if (this.isEnded) return
    const reason = abortReason(why)
    this.parts.cancellation.abort(reason)
    this.end(failure ?? Err(reason.message))
    this.stopGenerator()
  }

  private end(outcome: Result<unknown, string> | Promise<Result<unknown, string>>): void {
    this.isEnded = true
    if (this.timer) clearTimeout(this.timer)
    this.parts.cancellation.dispose()
    void Promise.resolve(outcome).then(this.settle)
  }

  /** Closes the generator (its `finally` runs); a failing `return()` is the generator's own business. */
  private stopGenerator(): void {
    const it = this.iterator
    if (!it?.return) return
    try {
      void Promise.resolve(this.parts.inScope(() => it.return!())).catch(() => undefined)
    } catch {
      // A return() that throws synchronously: nothing to do, the stream is over either way.
    }
  }

  private arm(ms: number): void {
    this.timer = setTimeout(this.watch, ms)
    this.timer.unref?.()
  }

  /** The silence timeout: ends the stream when a pull has waited `timeout` ms, else re-arms. */
  private readonly watch = () => {
    const timeout = this.parts.timeout
    if (!timeout || this.isEnded) return
    const waited = Date.now() - this.pullStarted
    if (this.waiting && waited >= timeout) {
      this.parts.cancellation.abort(abortReason(abortReasons.timeout(timeout)))
      this.end(fail.actionTimeout(this.parts.name, timeout))
      this.stopGenerator()
      return
    }
    this.arm(this.waiting ? timeout - waited : timeout)
  }
}
