// Compiled by `tsc --noEmit` in `npm test`: a streaming action's call is typed from its generator.
import { createClient, StreamError, type ClientResult, type EventStream } from '../../lib/client/index.js'
import type { services } from '../types/stream.typecheck.js'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
const assert = <T extends true>(value: T) => value

const client = createClient<typeof services>({ baseUrl: 'http://localhost/api' })

export async function typed() {
  const ticks = await client.streams.ticks({ count: 3 })
  assert<Equal<typeof ticks, ClientResult<EventStream<{ i: number }, string>>>>(true)
  // @ts-expect-error the payload follows the schema
  await client.streams.ticks({ cnt: 3 })
  if (!ticks.ok) return ticks.error.message
  for await (const event of ticks.value) {
    const i: number = event.i
    // @ts-expect-error events have only `i`
    event.j
    if (i > 1) break
  }
  const final = await ticks.value.final
  if (final.ok) {
    const text: string = final.value
    void text
  }

  const events = await client.streams.typed()
  assert<Equal<typeof events, ClientResult<EventStream<{ token: string }, { tokens: number }>>>>(true)
  const zod = await client.streams.zodEvents()
  if (zod.ok) for await (const event of zod.value) assert<Equal<typeof event, { n: number }>>(true)
  const iterable = await client.streams.fromIterable()
  assert<Equal<typeof iterable, ClientResult<EventStream<string, Record<string, never>>>>>(true)

  const plain = await client.streams.plain()
  assert<Equal<typeof plain, ClientResult<number>>>(true)

  try {
    if (events.ok) for await (const event of events.value) console.log(event.token)
  } catch (error) {
    if (error instanceof StreamError) {
      const code: string | undefined = error.code
      const status: number = error.httpStatus
      void [code, status]
    }
  }
  // A stream's thrown error narrows like a call's Err: the code picks the declared error's data.
  const declared = await client.streams.declared()
  if (declared.ok) {
    try {
      for await (const event of declared.value) console.log(event)
    } catch (error) {
      if (declared.value.isError(error)) {
        if (error.code === 'QUOTA') {
          const left: number = error.data.left
          // @ts-expect-error QUOTA's data has no such field
          error.data.right
          void left
        }
        const message: string = error.message
        void message
      }
    }
  }
  return undefined
}
