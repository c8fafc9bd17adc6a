// Compiled by `tsc --noEmit` in `npm test`: an unused @ts-expect-error fails the build. With an
// `output` schema the handler must return Ok of that schema's type, and the client's success type follows it.
import Type from 'typebox'
import { z } from 'zod'
import { createClient, isOk } from '../../lib/client/index.js'
import { createAction, createService, createServices, Ok } from '../../lib/index.js'

const Person = Type.Object({ id: Type.Integer(), name: Type.String(), nickname: Type.Optional(Type.String()) })

const get = createAction({
  name: 'get',
  description: 'TypeBox output',
  validation: Type.Object({ id: Type.Integer() }),
  output: Person,
  handler: (data) => Ok({ id: data.id, name: 'Ada' }),
})

// @ts-expect-error `name` must be a string
createAction({
  name: 'wrongType',
  description: 'The output says name is a string',
  output: Person,
  handler: () => Ok({ id: 1, name: 42 }),
})

// @ts-expect-error `name` is required by the output schema
createAction({
  name: 'missingField',
  description: 'The output requires name',
  output: Person,
  handler: () => Ok({ id: 1 }),
})

// @ts-expect-error the output is a number
createAction({
  name: 'primitive',
  description: 'A number output',
  output: Type.Number(),
  handler: () => Ok('three'),
})

const find = createAction({
  name: 'find',
  description: 'Standard Schema output',
  validation: z.object({ q: z.string() }),
  output: z.object({ matches: z.array(z.string()) }),
  handler: async (data) => Ok({ matches: [data.q] }),
})

// @ts-expect-error `matches` holds strings
createAction({
  name: 'zodWrong',
  description: 'zod output, wrong element type',
  output: z.object({ matches: z.array(z.string()) }),
  handler: () => Ok({ matches: [1] }),
})

const count = createAction({ name: 'count', description: 'A number', output: Type.Integer(), handler: () => Ok(3) })

const services = createServices([createService({ name: 'people', description: '', actions: [get, find, count] })])

export async function client() {
  const api = createClient<typeof services>({ baseUrl: 'http://localhost/api' })
  const person = await api.people.get({ id: 1 })
  if (isOk(person)) {
    const id: number = person.value.id
    const nickname: string | undefined = person.value.nickname
    // @ts-expect-error `password` is not in the output schema
    person.value.password
    void [id, nickname]
  }
  const found = await api.people.find({ q: 'a' })
  if (isOk(found)) {
    const first: string | undefined = found.value.matches[0]
    void first
  }
  const counted = await api.people.count({})
  if (isOk(counted)) {
    const n: number = counted.value
    // @ts-expect-error a number, unwrapped from data.result
    const s: string = counted.value
    void [n, s]
  }
}
