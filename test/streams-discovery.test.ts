/** A streaming action in the OpenAPI document (text/event-stream, the event schema) and in explore/schema (`stream: true`). */
import t from 'tap'
import { Validator } from '@seriousme/openapi-schema-validator'
import Type from 'typebox'
import { createAction, createService, messages, Ok } from '../lib/index.js'
import { buildServer, post } from './helpers/server.js'

const Token = Type.Object({ token: Type.String() })
const tokens = createAction({
  name: 'tokens',
  description: 'Streams tokens',
  validation: Type.Object({ prompt: Type.String() }),
  output: Token,
  handler: async function* (data) {
    for (const token of data.prompt.split(' ')) yield { token }
  },
})
const plain = createAction({ name: 'plain', description: 'Answers once', handler: () => Ok({}) })
const service = createService({ name: 'ai', description: 'AI', actions: [tokens, plain] })

t.test('the OpenAPI document: a text/event-stream answer with the event schema, and the 406', async (t) => {
  const server = await buildServer({ services: [service], rest: { openapi: { enabled: true, reference: false, public: true } } })
  t.teardown(() => server.close())
  const document = (await server.app.inject({ method: 'GET', url: '/api/openapi.json' })).json()
  t.same(await new Validator().validate(document), { valid: true }, 'valid OpenAPI 3.1')
  const operation = document.paths['/api/services/ai/tokens'].post
  t.same(Object.keys(operation.responses['200'].content), ['text/event-stream'])
  const media = operation.responses['200'].content['text/event-stream']
  t.equal(media.schema.type, 'string')
  t.same(media['x-events'].message, { ...Token })
  t.same(media['x-events'].error, { $ref: '#/components/schemas/ErrorEnvelope' })
  t.same(operation.responses['406'], { $ref: '#/components/responses/Error406' })
  const other = document.paths['/api/services/ai/plain'].post
  t.same(Object.keys(other.responses['200'].content), ['application/json'])
  t.notOk(other.responses['406'], 'only streaming actions list the 406')
})

t.test('explore and schema say which actions stream', async (t) => {
  const server = await buildServer({ services: [service] })
  t.teardown(() => server.close())
  const listed = await post(server.app, { intent: 'explore', service: 'ai', action: '*', payload: {} })
  t.same(listed.body.data.actions, [
    { name: 'tokens', description: 'Streams tokens', isProtected: false, validation: true, accessControl: [], stream: true },
    { name: 'plain', description: 'Answers once', isProtected: false, validation: false, accessControl: [] },
  ])
  const detail = await post(server.app, { intent: 'explore', service: 'ai', action: 'tokens', payload: {} })
  t.same(detail.body, {
    status: true,
    message: messages.actionDescribed('ai', 'tokens'),
    data: { name: 'tokens', description: 'Streams tokens', isProtected: false, accessControl: null, hooks: { before: [], after: [] }, meta: null, stream: true },
  })
  const schemas = await post(server.app, { intent: 'schema', service: 'ai', action: '*', payload: { output: true } })
  t.equal(schemas.body.data.tokens.stream, true)
  t.same(schemas.body.data.tokens.output, { ...Token })
  t.notOk('stream' in schemas.body.data.plain)
})
