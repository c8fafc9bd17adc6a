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

// The client: `error.code` narrows `error.data`; every declared code sits beside the FA_CLIENT_* ones.
import { createClient, isDeclaredError, type ClientError } from '../../lib/client/index.js'

export async function client() {
  const api = createClient<typeof services>({ baseUrl: 'http://localhost/api' })
  const r = await api.tasks.get({ id: 't-9' })
  if (!r.ok) {
    if (r.error.code === 'NOT_FOUND') {
      const id: string = r.error.data.id
      const code: 'NOT_FOUND' = r.error.data.code
      const status: number = r.error.httpStatus
      // @ts-expect-error NOT_FOUND's data has no `limit`
      r.error.data.limit
      void [id, code, status]
    } else if (r.error.code === 'QUOTA') {
      const limit: number = r.error.data.limit
      // @ts-expect-error `limit` is a number
      const text: string = r.error.data.limit
      void [limit, text]
    } else if (r.error.code === 'FA_CLIENT_TIMEOUT') {
      const ms: number = r.error.httpStatus
      void ms
    }
    // @ts-expect-error CONFLICT is not a code of tasks.get (it is update's)
    if (r.error.code === 'CONFLICT') void 0
    if (isDeclaredError(r.error)) {
      const code: 'NOT_FOUND' | 'GONE' | 'QUOTA' = r.error.code
      void code
    } else {
      // Not declared: a FA_CLIENT_* code, or none (a framework failure, a plain Err).
      const code: string | undefined = r.error.code
      // @ts-expect-error not a declared error here
      const declared: 'NOT_FOUND' = r.error.code
      void [code, declared]
    }
  }
  const u = await api.tasks.update({})
  if (!u.ok && u.error.code === 'CONFLICT') {
    const version: number = u.error.data.version
    void version
  }
  // An untyped call: isDeclaredError narrows to a code and data that carries it.
  const untyped = await api.invoke('tasks', 'get', { id: 'x' })
  if (!untyped.ok && isDeclaredError(untyped.error)) {
    const code: string = untyped.error.code
    const data: unknown = untyped.error.data.code
    const plain: ClientError = untyped.error
    void [code, data, plain]
  }
}
