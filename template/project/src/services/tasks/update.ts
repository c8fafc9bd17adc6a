import Type from 'typebox'
import { createAction } from 'fastify-actions'
import { select, Task, taskModel, update } from './model.js'

export default createAction({
  name: 'update',
  description: 'Changes the title, notes or done flag of a task',
  validation: Type.Object(
    {
      id: select.properties.id,
      data: Type.Object(
        { title: update.properties.title, notes: update.properties.notes, done: update.properties.done },
        { additionalProperties: false, minProperties: 1 },
      ),
    },
    { additionalProperties: false },
  ),
  output: Task,
  handler: ({ id, data }) => taskModel.update({ id, data }),
})
