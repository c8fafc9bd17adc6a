import Type from 'typebox'
import { createAction } from 'fastify-actions'
import { insert, Task, taskModel } from './model.js'

export default createAction({
  name: 'create',
  description: 'Creates a task',
  validation: Type.Object(
    { title: Type.String({ minLength: 1, maxLength: 200 }), notes: insert.properties.notes, done: insert.properties.done },
    { additionalProperties: false },
  ),
  output: Task,
  handler: (data) => taskModel.create({ data }),
})
