import Type from 'typebox'
import { createModel } from 'fastify-actions'
import { tasks } from '../../db/schema.js'

/** CRUD on the tasks table; the database is the context's `resources.database` (src/config.ts). */
export const taskModel = createModel(tasks, { name: 'task' })

// Inputs and outputs built from the table's generated schemas: the column rules come from the table.
export const { insert, update, select } = taskModel.schemas

/** A task as the actions answer it (the envelope keeps these fields only). */
export const Task = select

export const TaskId = Type.Object({ id: select.properties.id }, { additionalProperties: false })
