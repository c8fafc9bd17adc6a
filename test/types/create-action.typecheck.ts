// Compiled by `tsc --noEmit` in `npm test`: an unused @ts-expect-error fails the build, so each
// line below proves that the handler's `data` is typed from the schema.
import Type from 'typebox'
import { z } from 'zod'
import { createAction, createService, createServices, Ok, type Service } from '../../lib/index.js'
import { createClient } from '../../lib/client/index.js'

const typebox = createAction({
  name: 'typebox',
  description: 'TypeBox-typed data',
  validation: Type.Object({ title: Type.String(), count: Type.Integer() }),
  handler: (data) => {
    const title: string = data.title
    const count: number = data.count
    // @ts-expect-error `titel` is not a field of the schema
    data.titel
    // @ts-expect-error `count` is a number, not a string
    const wrong: string = data.count
    return Ok({ title, count, wrong })
  },
})

const zod = createAction({
  name: 'zod',
  description: 'Standard-Schema-typed data (the output type)',
  validation: z.object({ tags: z.array(z.string()).default([]) }),
  handler: (data) => {
    const tags: string[] = data.tags
    // @ts-expect-error `tag` is not a field of the schema
    data.tag
    return Ok(tags)
  },
})

const untyped = createAction({
  name: 'untyped',
  description: 'No schema: a record of unknowns',
  handler: (data) => {
    const value: unknown = data.anything
    // @ts-expect-error unknown values need narrowing
    const text: string = data.anything
    return Ok({ value, text })
  },
})

// @ts-expect-error a handler must return a Result
createAction({ name: 'bad', description: '', handler: () => 42 })

export const services: Service[] = createServices([{ name: 's', description: '', actions: [typebox, zod, untyped] }])

// Schemas are schemas (docs/actions-and-services.md): a string is no schema for `validation`,
// `output` or a declared error's `data`; an object that is no schema (`{ a: 'number' }`) type-checks
// (TypeBox's TSchema is any object) and is refused at boot with FA_ERR_CONFIG (test/schema-check.test.ts).
// @ts-expect-error a string is not a schema
createAction({ name: 'stringValidation', description: 'x', validation: 'string', handler: () => Ok({}) })
// @ts-expect-error a string is not a schema
createAction({ name: 'stringOutput', description: 'x', output: 'string', handler: () => Ok('x') })
// @ts-expect-error a number is not a schema
createAction({ name: 'numberOutput', description: 'x', output: 42, handler: () => Ok(42) })
// @ts-expect-error a string is not a schema
createAction({ name: 'stringData', description: 'x', errors: { GONE: { status: 410, data: 'object' } }, handler: () => Ok({}) })

// Actions written inside `createService` keep their client methods: the service's `actions: Action[]`
// must not fill the type arguments `createAction` infers from its definition only (`visibility`,
// `isSpecial`, `deprecated`): a `visibility` of `{ rest?: boolean }` hid the method, an `isSpecial`
// of `ActionSpecial` made it an upload.
const inline = createServices([
  createService({
    name: 'inline',
    description: 'Actions written in place',
    actions: [
      createAction({
        name: 'typed',
        description: 'A schema',
        validation: Type.Object({ title: Type.String() }),
        handler: (data) => Ok({ title: data.title }),
      }),
      createAction({ name: 'bare', description: 'No schema', handler: () => Ok({ at: 1 }) }),
      createAction({ name: 'hidden', description: 'Not on the client', visibility: { rest: false }, handler: () => Ok({}) }),
    ],
  }),
])
const inlineApi = createClient<typeof inline>({ baseUrl: 'http://localhost:8000/api' })
const methods: Array<keyof typeof inlineApi.inline> = ['typed', 'bare']
// @ts-expect-error `rest: false` still hides an action written in place
const hidden: keyof typeof inlineApi.inline = 'hidden'
void inlineApi.inline.typed({ title: 'x' })
// @ts-expect-error `title` is a string
void inlineApi.inline.typed({ title: 1 })
void methods
void hidden
