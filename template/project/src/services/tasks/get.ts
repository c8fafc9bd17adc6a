import { createAction, Fail, messages } from 'fastify-actions'
import { Task, TaskId, taskModel } from './model.js'

export default createAction({
  name: 'get',
  description: 'Reads one task by id',
  validation: TaskId,
  output: Task,
  // A declared error: 404 with data { code: 'NOT_FOUND', id }, typed on the client and in the OpenAPI document.
  errors: { NOT_FOUND: { status: 404, message: 'No such task', data: TaskId } },
  handler: async ({ id }) => {
    const found = await taskModel.findById(id)
    // findById's Err for a missing row ends with `Task not found`; a database error keeps its own text.
    if (!found.ok && found.error.endsWith(messages.notFound('task'))) return Fail('NOT_FOUND', { id })
    return found
  },
})
