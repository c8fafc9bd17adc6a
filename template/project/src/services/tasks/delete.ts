import { createAction } from 'fastify-actions'
import { Task, TaskId, taskModel } from './model.js'

export default createAction({
  name: 'delete',
  description: 'Deletes a task and answers it',
  validation: TaskId,
  output: Task,
  handler: (data) => taskModel.delete(data.id),
})
