// Compiled by `tsc --noEmit` in `npm test`: an unused @ts-expect-error fails the build. A handler that
// is an async generator function makes a streaming action; createAction infers its event and final types.
import Type from 'typebox'
import { z } from 'zod'
import { createAction, createService, createServices, Err, Fail, Ok, type ErrorsOf, type EventOf, type FinalOf, type IsStreamingAction } from '../../lib/index.js'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
const assert = <T extends true>(value: T) => value

const ticks = createAction({
  name: 'ticks',
  description: 'Yields numbers, returns a string',
  validation: Type.Object({ count: Type.Integer() }),
  handler: async function* (data, context) {
    const count: number = data.count
    // @ts-expect-error `cnt` is not a field of the schema
    data.cnt
    for (let i = 0; i < count && !context.signal.aborted; i++) yield { i }
    return 'finished'
  },
})
assert<Equal<EventOf<typeof ticks>, { i: number }>>(true)
assert<Equal<FinalOf<typeof ticks>, string>>(true)
assert<IsStreamingAction<typeof ticks>>(true)

const typed = createAction({
  name: 'typed',
  description: 'Events typed by the output schema',
  output: Type.Object({ token: Type.String() }),
  handler: async function* () {
    yield { token: 'a' }
    return Ok({ tokens: 1 })
  },
})
assert<Equal<EventOf<typeof typed>, { token: string }>>(true)
assert<Equal<FinalOf<typeof typed>, { tokens: number }>>(true)

createAction({
  name: 'wrongEvent',
  description: 'The output schema says token is a string',
  output: Type.Object({ token: Type.String() }),
  // @ts-expect-error an event must match the output schema
  handler: async function* () {
    yield { token: 1 }
  },
})

const zodEvents = createAction({
  name: 'zodEvents',
  description: 'Standard Schema events',
  output: z.object({ n: z.number() }),
  handler: async function* () {
    yield { n: 1 }
    return Err('stopped')
  },
})
assert<Equal<EventOf<typeof zodEvents>, { n: number }>>(true)
// A generator that can only end with an Err has no final value: the Err is never the final type.
assert<Equal<FinalOf<typeof zodEvents>, void>>(true)

const errOrFinal = createAction({
  name: 'errOrFinal',
  description: 'Returns a value or an Err',
  handler: async function* (_data, context) {
    yield 1
    if (context.signal.aborted) return Err('stopped')
    return { done: true }
  },
})
assert<Equal<FinalOf<typeof errOrFinal>, { done: boolean }>>(true)

// A streaming action may declare errors; its generator returns a Fail of them (its error event).
const declared = createAction({
  name: 'declared',
  description: 'Declared errors on a stream',
  errors: { QUOTA: { status: 429, data: Type.Object({ left: Type.Integer() }) } },
  handler: async function* (_data, context) {
    yield 'a'
    if (context.signal.aborted) return Fail('QUOTA', { left: 0 })
    return Ok(2)
  },
})
assert<Equal<FinalOf<typeof declared>, number>>(true)
assert<Equal<ErrorsOf<typeof declared>, { QUOTA: { left: number } }>>(true)

createAction({
  name: 'undeclared',
  description: 'A Fail of a code the action does not declare',
  errors: { QUOTA: { status: 429 } },
  // @ts-expect-error OTHER is not declared
  handler: async function* () {
    yield 'a'
    return Fail('OTHER')
  },
})

const fromIterable = createAction({
  name: 'fromIterable',
  description: 'A plain function returning an AsyncIterable',
  stream: true,
  handler: () => ({
    async *[Symbol.asyncIterator]() {
      yield 'x'
    },
  }),
})
assert<Equal<EventOf<typeof fromIterable>, string>>(true)

const plain = createAction({ name: 'plain', description: 'Not a stream', handler: () => Ok(1) })
assert<Equal<IsStreamingAction<typeof plain>, false>>(true)

export const services = createServices([createService({ name: 'streams', description: '', actions: [ticks, typed, zodEvents, errOrFinal, declared, fromIterable, plain] })])
