import { desc, eq } from 'drizzle-orm'
import Type from 'typebox'
import { createAction, createModel, Err, getContext, handleError, Ok, type DBX, type Service } from '../../lib/index.js'
import { tasks } from '../schema.js'

/** CRUD on the tasks table; the database is read from the context (`resources.database`) at each call. */
export const taskModel = createModel(tasks, { name: 'task' })

// Action payloads built from the generated schemas: the column rules (uuid, varchar(200), …) come from the table.
const { insert, update, select } = taskModel.schemas
const Id = Type.Object({ id: select.properties.id }, { additionalProperties: false })

export const signInRequired =
  'This action needs a signed-in user: start the server with JWT_SECRET and send "Authorization: Bearer <token>"'

const create = createAction({
  name: 'create',
  description: 'Creates a task',
  validation: Type.Object(
    { title: insert.properties.title, notes: insert.properties.notes, done: insert.properties.done },
    { additionalProperties: false },
  ),
  handler: (data) => taskModel.create({ data }),
})

const get = createAction({
  name: 'get',
  description: 'Reads one task by id',
  validation: Id,
  handler: (data) => taskModel.findById(data.id),
})

const list = createAction({
  name: 'list',
  description: 'Lists tasks: newest first by offset (limit, offset), or by id with a cursor ("" for the first page)',
  validation: Type.Object(
    {
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
      offset: Type.Optional(Type.Integer({ minimum: 0 })),
      cursor: Type.Optional(Type.String({ maxLength: 100 })),
    },
    { additionalProperties: false },
  ),
  handler: (data) => taskModel.findPaginated(data),
})

const change = createAction({
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
  handler: ({ id, data }) => taskModel.update({ id, data }),
})

const remove = createAction({
  name: 'delete',
  description: 'Deletes a task and answers it',
  validation: Id,
  handler: (data) => taskModel.delete(data.id),
})

const claim = createAction({
  name: 'claim',
  description: 'Makes the signed-in user the owner of a task (JWT)',
  isProtected: true,
  validation: Id,
  handler: (data, context) => {
    const user = context.getUser()
    if (!user) return Err(signInRequired)
    return taskModel.update({ id: data.id, data: { ownerId: user.userId } })
  },
})

const mine = createAction({
  name: 'mine',
  description: "Lists the signed-in user's tasks (JWT)",
  isProtected: true,
  handler: async (_data, context) => {
    const user = context.getUser()
    if (!user) return Err(signInRequired)
    // Beyond CRUD, a query is plain Drizzle on the context's database.
    const db = getContext<DBX>().resources.database
    if (!db) return Err('No database')
    try {
      const items = await db.select().from(tasks).where(eq(tasks.ownerId, user.userId)).orderBy(desc(tasks.createdAt))
      return Ok({ userId: user.userId, items })
    } catch (error) {
      // The client gets the log id, the log gets the details (a query error carries the SQL).
      return handleError({ message: 'Could not list your tasks', data: { error: String(error) } })
    }
  },
})

export const taskService: Service = {
  name: 'tasks',
  description: 'Tasks on a database: createModel with schemas from getValidationSchemas',
  meta: { version: '1' },
  actions: [create, get, list, change, remove, claim, mine],
}
