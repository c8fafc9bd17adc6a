import { createAction } from 'fastify-actions'
import { Task, TaskId, taskModel } from './model.js'

export default createAction({
  name: 'get',
  description: 'Reads one task by id',
  validation: TaskId,
  output: Task,
  handler: (data) => taskModel.findById(data.id),
})
