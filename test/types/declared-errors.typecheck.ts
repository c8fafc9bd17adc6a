// Compiled by `tsc --noEmit` in `npm test`: an unused @ts-expect-error fails the build. Declared
// errors: `Fail` is checked against the action's `errors`, with no type arguments in user code.
import Type from 'typebox'
import { z } from 'zod'
import { createAction, createService, createServices, Err, Fail, Ok } from '../../lib/index.js'

const NotFound = Type.Object({ id: Type.String() })

export const get = createAction({
  name: 'get',
  description: 'Declares NOT_FOUND (with data) and GONE (without)',
  validation: Type.Object({ id: Type.String() }),
  errors: {
    NOT_FOUND: { status: 404, message: 'No such task', data: NotFound },
    GONE: { status: 410 },
    QUOTA: { status: 402, data: z.object({ limit: z.number() }) },
  },
  handler: (data) => {
    if (data.id === 'gone') return Fail('GONE')
    if (data.id === 'quota') return Fail('QUOTA', { limit: 3 })
    if (data.id === 'plain') return Err('a plain Err still works')
    if (data.id === 'msg') return Fail('NOT_FOUND', { id: data.id }, `Task ${data.id} does not exist`)
    if (data.id === '') return Fail('NOT_FOUND', { id: data.id })
    return Ok({ id: data.id, title: 't' })
  },
})

// @ts-expect-error CONFLICT is not declared
createAction({ name: 'undeclared', description: '', errors: { NOT_FOUND: { status: 404 } }, handler: () => Fail('CONFLICT') })

// @ts-expect-error `id` is a string in NOT_FOUND's data
createAction({ name: 'wrongData', description: '', errors: { NOT_FOUND: { data: NotFound } }, handler: () => Fail('NOT_FOUND', { id: 42 }) })

// @ts-expect-error NOT_FOUND requires its data
createAction({ name: 'missingData', description: '', errors: { NOT_FOUND: { data: NotFound } }, handler: () => Fail('NOT_FOUND') })

// @ts-expect-error no errors declared: no Fail at all
createAction({ name: 'none', description: '', handler: () => Fail('NOT_FOUND') })

// With an output schema too, and async.
export const update = createAction({
  name: 'update',
  description: 'output + errors',
  output: Type.Object({ id: Type.String() }),
  errors: { CONFLICT: { status: 409, data: Type.Object({ version: Type.Integer() }) } },
  handler: async () => (Math.random() > 0.5 ? Ok({ id: 'x' }) : Fail('CONFLICT', { version: 2 })),
})

// @ts-expect-error `version` is an integer
createAction({ name: 'u2', description: '', output: Type.Object({ id: Type.String() }), errors: { CONFLICT: { data: Type.Object({ version: Type.Integer() }) } }, handler: async () => Fail('CONFLICT', { version: 'x' }) })

export const services = createServices([createService({ name: 'tasks', description: '', actions: [get, update] })])
