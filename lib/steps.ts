/**
 * The pipeline's steps are generators that `yield` what they wait for. `run` goes on at once when
 * the value is already there and awaits only a real promise: synchronous validators, handlers and
 * hooks cost no promise and no microtask (on Node 20 each promise also runs AsyncLocalStorage's hook).
 */
export type Steps<T> = Generator<unknown, T, unknown>

/**
 * `const value = yield* settle(valueOrPromise)`: the step's `await`. The hot steps of the engine write
 * it inline instead (`isThenable(x) ? ((yield x) as T) : x`): a plain value then costs no generator
 * object and no round trip through `run`.
 */
export function* settle<T>(value: T | PromiseLike<T>): Steps<T> {
  if (!isThenable(value)) return value
  // `run` sends back what was yielded, awaited first: a T.
  return (yield value) as T
}

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function'
}

/**
 * Runs steps to their end; a throw or rejection anywhere becomes `onError(error)`. The value itself
 * when no step waited on a promise (no promise made at all), else a promise of it. `T` must not be
 * a thenable (the pipeline's is a Result).
 */
export function run<T>(steps: Steps<T>, onError: (error: unknown) => T): T | Promise<T> {
  try {
    const step = proceed(steps, steps.next())
    return step.done ? step.value : resume(steps, step.value).catch(onError)
  } catch (error) {
    return onError(error)
  }
}

/** Feeds plain values straight back; stops at the end or at the first promise. */
function proceed<T>(steps: Steps<T>, step: IteratorResult<unknown, T>): { done: true; value: T } | { done: false; value: PromiseLike<unknown> } {
  while (!step.done) {
    if (isThenable(step.value)) return { done: false, value: step.value }
    step = steps.next(step.value)
  }
  return step
}

async function resume<T>(steps: Steps<T>, pending: PromiseLike<unknown>): Promise<T> {
  for (;;) {
    let value: unknown
    let failed = false
    try {
      value = await pending
    } catch (error) {
      failed = true
      value = error
    }
    const step = proceed(steps, failed ? steps.throw(value) : steps.next(value))
    if (step.done) return step.value
    pending = step.value
  }
}

/** Races a promise against a deadline; the timer is always cleared. A plain value passes through. */
export function withDeadline<T>(pending: T | Promise<T>, ms: number, onTimeout: () => Error): T | Promise<T> {
  if (!(pending instanceof Promise)) return pending
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms)
  })
  return Promise.race([pending, deadline]).finally(() => clearTimeout(timer))
}
