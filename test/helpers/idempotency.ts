import Type from 'typebox'
import { createAction, Err, Fail, Ok, type Service } from '../../lib/index.js'

/** Counts runs of each action and lets a test hold a run open (`gate`) to probe the in-flight rule. */
export interface Ledger {
  runs: Record<string, number>
  /** While set, `charge` waits for it before answering. */
  gate?: Promise<void>
  /** Called when a held `charge` has started. */
  started?: () => void
}

/** `pay.charge` (required), `pay.note` (optional), `pay.refuse` (Err, a 400), `pay.declined` (declared 402), `pay.slow` (times out: 504). */
export function paymentService(ledger: Ledger): Service {
  const count = (name: string) => (ledger.runs[name] = (ledger.runs[name] ?? 0) + 1)
  const charge = createAction({
    name: 'charge',
    description: 'Charges an amount once per key',
    idempotency: 'required',
    validation: Type.Object({ amount: Type.Number(), currency: Type.Optional(Type.String()), note: Type.Optional(Type.String()) }),
    handler: async (data) => {
      const run = count('charge')
      if (ledger.gate) {
        ledger.started?.()
        await ledger.gate
      }
      return Ok({ id: `ch_${run}`, amount: data.amount })
    },
  })
  const note = createAction({
    name: 'note',
    description: 'Notes a value; a key is optional',
    idempotency: 'optional',
    handler: () => Ok({ run: count('note') }),
  })
  const refuse = createAction({
    name: 'refuse',
    description: 'Always refuses',
    idempotency: 'optional',
    handler: () => Err(`refused ${count('refuse')}`),
  })
  const declined = createAction({
    name: 'declined',
    description: 'Always declined',
    idempotency: 'optional',
    errors: { DECLINED: { status: 402, data: Type.Object({ attempt: Type.Number() }) } },
    handler: () => Fail('DECLINED', { attempt: count('declined') }),
  })
  const slow = createAction({
    name: 'slow',
    description: 'Runs past its timeout',
    idempotency: 'optional',
    timeout: 50,
    handler: async () => {
      count('slow')
      await new Promise((resolve) => setTimeout(resolve, 2000))
      return Ok({})
    },
  })
  const plain = createAction({ name: 'plain', description: 'No idempotency', handler: () => Ok({ run: count('plain') }) })
  return { name: 'pay', description: 'Payments', actions: [charge, note, refuse, declined, slow, plain] }
}
