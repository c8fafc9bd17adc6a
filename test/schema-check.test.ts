import t from 'tap'
import Type from 'typebox'
import { z } from 'zod'
import { createAction, createServer, messages, Ok, UploadedFiles, type Action } from '../lib/index.js'

/*
 * Schemas are schemas (issue 42 item 3): `validation`, `output` and a declared error's `data` take a
 * TypeBox schema, a Standard Schema validator or a JSON Schema object. Anything else is refused at
 * boot with FA_ERR_CONFIG naming the service, the action and the field.
 */

const boot = (action: Action) =>
  createServer({ serverName: 'schemas', logServices: false, forceNewInstance: true, services: [{ name: 'tasks', description: 'Tasks', actions: [action] }], rest: { baseUrl: '/api', allowedOrigins: [] } })

/** An action whose schema field is anything: the types would refuse most of these, the boot must too. */
function actionWith(fields: Record<string, unknown>): Action {
  return { name: 'create', description: 'Creates a task', handler: () => Ok({}), ...fields } as unknown as Action
}

const refusal = (field: string, reason: string) => ({ code: 'FA_ERR_CONFIG', message: messages.notASchema('tasks.create', field, reason) })

t.test('refused at boot: a plain object, a string, an invalid keyword, in each field', async (t) => {
  await t.rejects(boot(actionWith({ validation: { a: 'number' } })), refusal('validation', "unknown keyword 'a' at /"))
  t.equal(messages.notASchema('tasks.create', 'validation', "unknown keyword 'a' at /"), "Action 'tasks.create': validation must be a TypeBox schema, a Standard Schema validator or a JSON Schema object (unknown keyword 'a' at /)")
  await t.rejects(boot(actionWith({ validation: 'string' })), refusal('validation', 'got the string "string"'))
  await t.rejects(boot(actionWith({ validation: Type.Object({ title: Type.String({ minLength: 'x' as unknown as number }) }) })), refusal('validation', `'minLength' at /properties/title must be a non-negative integer, got "x"`))
  await t.rejects(boot(actionWith({ output: 'string' })), refusal('output', 'got the string "string"'))
  await t.rejects(boot(actionWith({ output: { a: 'number' } })), refusal('output', "unknown keyword 'a' at /"))
  await t.rejects(boot(actionWith({ output: Type.Array(Type.Integer({ maximum: 'ten' as unknown as number })) })), refusal('output', `'maximum' at /items must be a number, got "ten"`))
  await t.rejects(boot(actionWith({ validation: Type.Object({ tag: Type.String({ pattern: '(' }) }) })), refusal('validation', `'pattern' at /properties/tag must be a regular expression, got "("`))
  await t.rejects(boot(actionWith({ validation: { type: 'text' } })), refusal('validation', `'type' at / must be a JSON type name or a list of them, got "text"`))
  await t.rejects(boot(actionWith({ validation: { type: 'object', properties: { a: 'number' } } })), refusal('validation', '/properties/a must be a schema, got the string "number"'))
  await t.rejects(
    boot(actionWith({ errors: { NOT_FOUND: { status: 404, data: Type.Object({ id: Type.String({ maxLength: -1 }) }) } } })),
    refusal('errors.NOT_FOUND.data', `'maxLength' at /properties/id must be a non-negative integer, got -1`),
  )
  await t.rejects(boot(actionWith({ errors: { NOT_FOUND: { status: 404, data: { type: 'object', propertys: {} } } } })), refusal('errors.NOT_FOUND.data', "unknown keyword 'propertys' at /"))
})

t.test('accepted: TypeBox (uploads, unions, records, refinements), JSON Schema with annotations and x- extensions, Standard Schema', async (t) => {
  const accepted: Array<Record<string, unknown>> = [
    { validation: Type.Object({ title: Type.String({ minLength: 1, maxLength: 80, pattern: '^[a-z]+$', format: 'email' }), tags: Type.Optional(Type.Array(Type.String(), { uniqueItems: true })) }) },
    { validation: Type.Object({ kind: Type.Union([Type.Literal('a'), Type.Null()]), map: Type.Record(Type.String(), Type.Number({ exclusiveMinimum: 0 })) }) },
    { validation: Type.Object({ fields: Type.Object({ taskId: Type.String() }), files: Type.Object({ file: UploadedFiles }) }), isSpecial: { contentType: 'multipart/form-data', uploadMode: 'flat' } },
    { validation: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { n: { type: ['integer', 'null'], minimum: 0, 'x-unit': 'days', examples: [1] } }, required: ['n'], additionalProperties: false } },
    { validation: z.object({ title: z.string() }), output: z.object({ id: z.string() }) },
    { output: Type.Object({ id: Type.Integer(), when: Type.String({ format: 'date-time' }) }, { description: 'A task', $id: 'Task' }) },
    { errors: { NOT_FOUND: { status: 404, data: Type.Object({ id: Type.String() }) } } },
  ]
  for (const fields of accepted) {
    const server = await boot(actionWith(fields))
    t.ok(server.rest, `boots: ${Object.keys(fields).join(', ')}`)
    await server.close()
  }
})

t.test('a valid schema still validates: the refusal is about the schema, not the payload', async (t) => {
  const server = await boot(createAction({ name: 'create', description: 'Creates a task', validation: Type.Object({ title: Type.String({ minLength: 1 }) }), handler: (data) => Ok({ title: data.title }) }))
  t.teardown(() => server.close())
  const answer = await server.rest!.app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'execute', service: 'tasks', action: 'create', payload: { anything: 1 } } })
  t.equal(answer.statusCode, 400)
  t.equal(answer.json().message, messages.validationFailed)
})
