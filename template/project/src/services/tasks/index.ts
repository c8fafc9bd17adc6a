import { createService } from 'fastify-actions'
import createAction from './create.js'
import deleteAction from './delete.js'
import getAction from './get.js'
import listAction from './list.js'
import updateAction from './update.js'

/** Tasks on the database: CRUD through createModel, inputs and outputs from the table's schemas. */
export const tasksService = createService({
  name: 'tasks',
  description: 'Tasks: create, list, get, update, delete',
  actions: [createAction, listAction, getAction, updateAction, deleteAction],
})
