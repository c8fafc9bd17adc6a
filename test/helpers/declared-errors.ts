import Type from 'typebox'
import { z } from 'zod'
import { createAction, createService, createServices, Err, Fail, Ok } from '../../lib/index.js'

/** Actions that declare errors, for the wire, client, OpenAPI and MCP tests of declared errors. */
export const TaskNotFound = Type.Object({ id: Type.String() })

export const getTask = createAction({
  name: 'get',
  description: 'A task by id',
  validation: Type.Object({ id: Type.String() }),
  errors: {
    NOT_FOUND: { status: 404, message: 'No such task', data: TaskNotFound },
    GONE: { status: 410, message: 'The task was archived' },
    LOCKED: { status: 400 },
    QUOTA: { status: 402, data: z.object({ limit: z.number() }) },
  },
  handler: (data) => {
    switch (data.id) {
      case 'custom':
        return Fail('NOT_FOUND', { id: data.id }, `Task ${data.id} does not exist`)
      case 'gone':
        return Fail('GONE')
      case 'locked':
        return Fail('LOCKED')
      case 'quota':
        return Fail('QUOTA', { limit: 3 })
      case 'plain':
        return Err('a plain Err')
      case 'leak':
        // The extra property is not in NOT_FOUND's schema: it never leaves the server.
        return Fail('NOT_FOUND', { id: data.id, secret: 'hunter2' } as { id: string })
      case 'mismatch':
        return Fail('NOT_FOUND', {} as { id: string })
      case 'undeclared':
        // What plain JavaScript (no types) could do: a code the action does not declare.
        return Fail('NOPE' as 'GONE')
      case 't-1':
        return Ok({ id: 't-1', title: 'Write the docs' })
      default:
        return Fail('NOT_FOUND', { id: data.id })
    }
  },
})

export const updateTask = createAction({
  name: 'update',
  description: 'Updates a task, with an output schema and a conflict',
  validation: Type.Object({ id: Type.String(), version: Type.Integer() }),
  output: Type.Object({ id: Type.String(), version: Type.Integer() }),
  errors: { CONFLICT: { status: 409, message: 'Changed by someone else', data: Type.Object({ version: Type.Integer() }) } },
  handler: async (data) => (data.version === 1 ? Ok({ id: data.id, version: 2 }) : Fail('CONFLICT', { version: 1 })),
})

/** A hook that checks the task exists: its NOT_FOUND is the answer of the action it guards when that one declares NOT_FOUND too. */
export const exists = createAction({
  name: 'exists',
  description: 'Refuses an unknown id',
  errors: { NOT_FOUND: { status: 404, data: TaskNotFound } },
  visibility: { rest: false },
  handler: (data: Record<string, unknown>) => (data.id === 't-1' ? Ok(data) : Fail('NOT_FOUND', { id: String(data.id) })),
})

export const removeTask = createAction({
  name: 'remove',
  description: 'Guarded by the exists hook',
  errors: { NOT_FOUND: { status: 404, message: 'Nothing to remove', data: TaskNotFound } },
  hooks: { before: [{ service: 'tasks', action: 'exists', isCritical: true }] },
  handler: () => Ok({ removed: true }),
})

export const archiveTask = createAction({
  name: 'archive',
  description: 'Guarded by the exists hook, declares nothing',
  hooks: { before: [{ service: 'tasks', action: 'exists', isCritical: true }] },
  handler: () => Ok({ archived: true }),
})

export const ping = createAction({ name: 'ping', description: 'No declared errors', handler: () => Ok('pong') })

export const declaredServices = createServices([
  createService({ name: 'tasks', description: 'Tasks with declared errors', actions: [getTask, updateTask, exists, removeTask, archiveTask, ping] }),
])
