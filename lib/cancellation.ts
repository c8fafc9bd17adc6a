import { ErrAborted } from './errors.js'

/** Why an execution's `context.signal` aborted (its `reason`: an `FA_ERR_ABORTED` error with this text). */
export const abortReasons = {
  disconnected: 'the client disconnected',
  shutdown: 'the server is shutting down',
  timeout: (ms: number) => `no answer within ${ms}ms`,
  closed: 'the stream was closed',
} as const

/** An `FA_ERR_ABORTED` error: what `context.signal.reason` holds. */
export function abortReason(text: string): Error {
  return new ErrAborted(text)
}

// Outside an execution `context.signal` is one that never aborts.
const never = new AbortController().signal

/** The signal of code that runs outside any execution (at boot, in a script): it never aborts. */
export const neverAborted: AbortSignal = never

/**
 * The cancellation of one execution. Its AbortController is made only when `context.signal` is read
 * (most actions never read it, and the hot path makes none); an abort before that is remembered.
 * `upstream` gives the caller's own signal (the HTTP request's, an MCP call's), linked on first read.
 */
export class Cancellation {
  // Plain fields (not #private): one is made per execution, on the hot path.
  private controller: AbortController | undefined = undefined
  private reason: unknown = undefined
  private done = false
  private unlink: (() => void) | undefined = undefined

  constructor(private readonly upstream?: () => AbortSignal | undefined) {}

  get aborted(): boolean {
    return this.done || (this.controller?.signal.aborted ?? false)
  }

  get signal(): AbortSignal {
    if (this.controller) return this.controller.signal
    const controller = (this.controller = new AbortController())
    if (this.done) {
      controller.abort(this.reason)
      return controller.signal
    }
    const upstream = this.upstream?.()
    if (upstream) {
      if (upstream.aborted) controller.abort(upstream.reason)
      else {
        const follow = () => this.abort(upstream.reason)
        upstream.addEventListener('abort', follow, { once: true })
        this.unlink = () => upstream.removeEventListener('abort', follow)
      }
    }
    return controller.signal
  }

  abort(reason: unknown): void {
    if (this.done) return
    this.done = true
    this.reason = reason
    this.dispose()
    this.controller?.abort(reason)
  }

  /** The execution ended: stop following the upstream signal (it may outlive the execution). */
  dispose(): void {
    if (this.unlink === undefined) return
    this.unlink()
    this.unlink = undefined
  }
}
