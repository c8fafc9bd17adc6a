import type { ServerContext } from './context.js'
import { errorMessage } from './diagnostics.js'
import { ErrBootFailed, ErrBootTimeout } from './errors.js'

/**
 * Awaits `onBoot.fn(context)` against its deadline. Resolves with the time it took, or rejects with
 * a coded error (`FA_ERR_BOOT_FAILED`, `FA_ERR_BOOT_TIMEOUT`): `createServer` then ends the process,
 * the Fastify plugin rejects `ready()`. The deadline is also checked when `fn` settles: a step that
 * blocks the event loop (an embedded database's first set-up) keeps the timer from firing, and its
 * result would otherwise win the race long past the limit.
 */
export async function runOnBoot(onBoot: { fn: (context: ServerContext<any>) => unknown; maxWaitTime: number }, context: ServerContext<any>): Promise<number> {
  const started = performance.now()
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), onBoot.maxWaitTime)
  })
  let outcome: unknown
  try {
    outcome = await Promise.race([Promise.resolve(onBoot.fn(context)), deadline])
  } catch (error) {
    throw new ErrBootFailed(errorMessage(error))
  } finally {
    clearTimeout(timer)
  }
  const elapsed = performance.now() - started
  if (outcome === 'timeout' || elapsed > onBoot.maxWaitTime) throw new ErrBootTimeout(onBoot.maxWaitTime)
  const result = outcome as { ok?: unknown; error?: unknown } | null | undefined
  if (!result || result.ok !== true) {
    throw new ErrBootFailed(result && result.ok === false ? String(result.error) : 'it did not return a Result')
  }
  return Math.round(elapsed)
}
