// Compiled by `tsc --noEmit` in `npm test`: an unused @ts-expect-error fails the build, so each
// line below proves that the handler's `data` is typed from the schema.
import Type from 'typebox'
import { z } from 'zod'
import { createAction, createServices, Ok, type Service } from '../../lib/index.js'

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
