import Type from 'typebox'
import { createAction, Ok } from 'fastify-actions'
import { Task, taskModel } from './model.js'

export default createAction({
  name: 'list',
  description: 'Lists tasks, newest first (limit, offset)',
  validation: Type.Object(
    {
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
      offset: Type.Optional(Type.Integer({ minimum: 0 })),
    },
    { additionalProperties: false },
  ),
  output: Type.Object({ items: Type.Array(Task), total: Type.Integer(), hasMore: Type.Boolean() }),
  handler: async (data) => {
    const page = await taskModel.findPaginated({ limit: data.limit, offset: data.offset ?? 0 })
    if (!page.ok) return page
    const { items, hasMore } = page.value
    return Ok({ items, total: 'total' in page.value ? page.value.total : items.length, hasMore })
  },
})
