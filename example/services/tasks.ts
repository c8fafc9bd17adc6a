import { randomUUID } from 'node:crypto'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { and, desc, eq } from 'drizzle-orm'
import Type from 'typebox'
import { createAction, createModel, createService, Err, Fail, getContext, handleError, messages, Ok, UploadedFiles, type Result } from '../../lib/index.js'
import type { Db } from '../db.js'
import { attachments, tasks } from '../schema.js'

/** CRUD on the tasks table; the database is read from the context (`resources.database`) at each call. */
export const taskModel = createModel(tasks, { name: 'task' })

// Action payloads built from the generated schemas: the column rules (uuid, varchar(200), …) come from the table.
const { insert, update, select } = taskModel.schemas
const Id = Type.Object({ id: select.properties.id }, { additionalProperties: false })

export const signInRequired = 'This action needs a signed-in user: log in first (account.login)'

/**
 * The declared error of the actions that name one task: callers tell "no such task" apart by its code
 * (`error.code === 'NOT_FOUND'`), get a 404, and read the id back from `error.data.id`.
 */
const taskErrors = { NOT_FOUND: { status: 404, message: messages.notFound('task'), data: Type.Object({ id: Type.String() }) } }

/**
 * The model answers an unknown id with its `Task not found` Err (after a log id when a logger is set):
 * here it is NOT_FOUND, with the model's text as its message so the log id stays in it.
 */
function orNotFound<T>(id: string, result: Result<T, string>) {
  return !result.ok && result.error.endsWith(messages.notFound('task')) ? Fail('NOT_FOUND', { id }, result.error) : result
}

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
  errors: taskErrors,
  handler: async (data) => orNotFound(data.id, await taskModel.findById(data.id)),
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
  errors: taskErrors,
  handler: async ({ id, data }) => orNotFound(id, await taskModel.update({ id, data })),
})

const remove = createAction({
  name: 'delete',
  description: 'Deletes a task and answers it',
  validation: Id,
  errors: taskErrors,
  handler: async (data) => orNotFound(data.id, await taskModel.delete(data.id)),
})

const claim = createAction({
  name: 'claim',
  description: 'Makes the signed-in user the owner of a task (JWT)',
  isProtected: true,
  validation: Id,
  errors: taskErrors,
  handler: async (data, context) => {
    const user = context.getUser()
    if (!user) return Err(signInRequired)
    return orNotFound(data.id, await taskModel.update({ id: data.id, data: { ownerId: user.userId } }))
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
    const db = getContext<Db>().resources.database
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

const add = createAction({
  name: 'add',
  description: 'Creates a task owned by the signed-in user (JWT)',
  isProtected: true,
  validation: Type.Object({ title: insert.properties.title, notes: insert.properties.notes }, { additionalProperties: false }),
  handler: (data, context) => {
    const user = context.getUser()
    if (!user) return Err(signInRequired)
    return taskModel.create({ data: { ...data, ownerId: user.userId } })
  },
})

/** Where attachment bytes are kept: `resources.attachmentsDir` (ATTACHMENTS_DIR), `./data/attachments` by default. */
function attachmentsDir(): string {
  const dir = getContext().resources.attachmentsDir
  return resolve(typeof dir === 'string' ? dir : './data/attachments')
}

export const taskNotFound = 'Task not found'

const attach = createAction({
  name: 'attach',
  description: "Attaches files to one of the signed-in user's tasks (multipart: taskId, file)",
  isProtected: true,
  // The upload validation chain (sizes, count, types) has run before this schema is checked.
  isSpecial: { contentType: 'multipart/form-data', uploadMode: 'flat' },
  validation: Type.Object({
    fields: Type.Object({ taskId: select.properties.id }),
    files: Type.Object({ file: UploadedFiles }),
  }),
  handler: async (data, context) => {
    const user = context.getUser()
    if (!user) return Err(signInRequired)
    const db = getContext<Db>().resources.database as Db
    const [task] = await db.select({ id: tasks.id }).from(tasks).where(and(eq(tasks.id, data.fields.taskId), eq(tasks.ownerId, user.userId)))
    if (!task) return Err(taskNotFound)
    const files = Array.isArray(data.files.file) ? data.files.file : [data.files.file]
    const dir = attachmentsDir()
    await mkdir(dir, { recursive: true })
    const written: string[] = []
    try {
      const rows = files.map((file) => ({ id: randomUUID(), taskId: task.id, name: file.name, type: file.type, size: file.size, uploadedBy: user.userId }))
      for (const [index, file] of files.entries()) {
        const path = join(dir, rows[index].id)
        await writeFile(path, new Uint8Array(await file.arrayBuffer()))
        written.push(path)
      }
      const items = await db.insert(attachments).values(rows).returning()
      return Ok({ items })
    } catch (error) {
      await Promise.all(written.map((path) => rm(path, { force: true })))
      return handleError({ message: 'Could not store the attachment', data: { error: String(error) } })
    }
  },
})

const listAttachments = createAction({
  name: 'attachments',
  description: "Lists the attachments of the signed-in user's tasks (optionally of one task)",
  isProtected: true,
  validation: Type.Object({ taskId: Type.Optional(select.properties.id) }, { additionalProperties: false }),
  handler: async (data, context) => {
    const user = context.getUser()
    if (!user) return Err(signInRequired)
    const db = getContext<Db>().resources.database as Db
    const owned = eq(tasks.ownerId, user.userId)
    const items = await db
      .select({
        id: attachments.id,
        taskId: attachments.taskId,
        name: attachments.name,
        type: attachments.type,
        size: attachments.size,
        createdAt: attachments.createdAt,
      })
      .from(attachments)
      .innerJoin(tasks, eq(tasks.id, attachments.taskId))
      .where(data.taskId ? and(owned, eq(attachments.taskId, data.taskId)) : owned)
      .orderBy(attachments.createdAt)
    return Ok({ items })
  },
})

export const taskService = createService({
  name: 'tasks',
  description: 'Tasks on a database: createModel with schemas from getValidationSchemas; attachments by upload',
  meta: { version: '1' },
  actions: [create, get, list, change, remove, claim, mine, add, attach, listAttachments],
})
