import Type from 'typebox'
import { createAction, Err, Ok, type Service } from '../../lib/index.js'

export const echo = createAction({
  name: 'echo',
  description: 'Echoes a title and a count',
  validation: Type.Object({ title: Type.String({ minLength: 1 }), count: Type.Integer({ minimum: 0 }) }),
  handler: (data) => Ok({ title: data.title, count: data.count }),
})

export const fails = createAction({
  name: 'fails',
  description: 'Always answers Err',
  handler: () => Err('it failed'),
})

export const throws = createAction({
  name: 'throws',
  description: 'Always throws',
  handler: () => {
    throw new Error('handler exploded')
  },
})

export const list = createAction({
  name: 'list',
  description: 'Answers an array',
  handler: () => Ok([1, 2, 3]),
})

export const echoService: Service = {
  name: 'tasks',
  description: 'Test tasks',
  actions: [echo, fails, throws, list],
}
