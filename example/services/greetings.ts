import { setTimeout as sleep } from 'node:timers/promises'
import Type from 'typebox'
import { createAction, createService, Err, Ok } from '../../lib/index.js'

/** A before hook: trims the name and remembers when the execution started. */
const normalize = createAction({
  name: 'normalize',
  description: 'Trims the name (used as a before hook)',
  visibility: { rest: false },
  handler: (data: Record<string, unknown>, context) => {
    context.updateHookState('startedAt', Date.now())
    const name = typeof data.name === 'string' ? data.name.trim() : data.name
    return Ok({ ...data, name })
  },
})

/** An after hook: stamps how long the execution took. */
const stamp = createAction({
  name: 'stamp',
  description: 'Adds the elapsed time (used as an after hook)',
  visibility: { rest: false },
  handler: (data: Record<string, unknown>, context) => {
    const startedAt = context.hookContext.state.startedAt as number | undefined
    return Ok({ ...data, tookMs: startedAt === undefined ? null : Date.now() - startedAt })
  },
})

const hello = createAction({
  name: 'hello',
  description: 'Greets someone by name',
  validation: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }),
  // The answer's shape: it types the handler's Ok, describes the response in /api/openapi.json, and
  // serializes it (the after hook's `tookMs` is listed, so it is kept; anything else would be dropped).
  output: Type.Object({ greeting: Type.String(), tookMs: Type.Optional(Type.Union([Type.Number(), Type.Null()])) }),
  hooks: {
    before: [{ service: 'greetings', action: 'normalize', isCritical: true }],
    after: [{ service: 'greetings', action: 'stamp', isCritical: false }],
  },
  handler: (data) => Ok({ greeting: `Hello, ${data.name}!` }),
})

const refuse = createAction({
  name: 'refuse',
  description: 'Always answers with an Err, to show the error envelope',
  handler: () => Err('This action always refuses'),
})

/** The longest wait `greetings.slow` accepts, so a request can never hold the server for long. */
export const SLOW_MAX_MS = 5000

/** A request that takes its time: send SIGTERM while it runs to watch a graceful shutdown (docs/security.md). */
const slow = createAction({
  name: 'slow',
  description: `Waits ms milliseconds (at most ${SLOW_MAX_MS}) before answering`,
  validation: Type.Object({ ms: Type.Integer({ minimum: 0, maximum: SLOW_MAX_MS }) }),
  handler: async (data, context) => {
    context.resources.logger?.info({ atFunction: 'greetings.slow', message: `waiting ${data.ms}ms` })
    await new Promise((resolve) => setTimeout(resolve, data.ms))
    return Ok({ waitedMs: data.ms })
  },
})

/** Waits `ms`, or less when `signal` aborts (the client went away): nothing keeps running for nobody. */
const pause = (ms: number, signal: AbortSignal) => sleep(ms, undefined, { signal }).catch(() => undefined)

/**
 * A streaming action (docs/streaming.md): an async generator. Each `yield` is one event the page
 * shows as it arrives, the way a chat model streams its tokens; the `return` value is the final one.
 */
const wave = createAction({
  name: 'wave',
  description: 'Streams a greeting word by word, delayMs apart',
  validation: Type.Object({
    name: Type.String({ minLength: 1, maxLength: 100 }),
    delayMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
  }),
  output: Type.Object({ word: Type.String(), index: Type.Integer() }),
  handler: async function* (data, context) {
    const text = `Hello ${data.name.trim()}, these words arrive one at a time, as they are made.`
    const list = text.split(' ')
    for (const [index, word] of list.entries()) {
      if (index > 0) await pause(data.delayMs ?? 150, context.signal)
      if (context.signal.aborted) return { words: index } // the client left: stop working
      yield { word, index }
    }
    return { words: list.length }
  },
})

export const greetings = createService({
  name: 'greetings',
  description: 'Greetings: validation, hooks, an Err, a slow request and a stream',
  meta: { version: '1' },
  actions: [normalize, stamp, hello, refuse, slow, wave],
})
