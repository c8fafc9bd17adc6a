import t from 'tap'
import { Validator } from '@seriousme/openapi-schema-validator'
import { buildServer } from './helpers/server.js'
import { paymentService } from './helpers/idempotency.js'

t.test('OpenAPI: the Idempotency-Key header, the replay header and the 409/422 answers of idempotent actions only', async (t) => {
  const server = await buildServer({ services: [paymentService({ runs: {} })], rest: { openapi: { enabled: true, public: true } } })
  t.teardown(() => server.close())
  const document = (await server.app.inject({ method: 'GET', url: '/api/openapi.json' })).json()
  const result = await new Validator().validate(document)
  t.equal(result.valid, true, JSON.stringify(result.errors))
  const operation = (action: string) => document.paths[`/api/services/pay/${action}`].post
  const header = (action: string) => operation(action).parameters?.find((parameter: { name: string }) => parameter.name === 'Idempotency-Key')
  t.match(header('charge'), { in: 'header', required: true, schema: { type: 'string', minLength: 1, maxLength: 255 } })
  t.match(header('note'), { in: 'header', required: false })
  t.equal(header('plain'), undefined)
  for (const action of ['charge', 'note']) {
    const responses = operation(action).responses
    t.match(responses['409'].description, /FA_ERR_IDEMPOTENCY_IN_FLIGHT/)
    t.match(responses['422'].description, /FA_ERR_IDEMPOTENCY_KEY_REUSED/)
    t.same(responses['409'].content, { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } })
    t.ok(responses['200'].headers['Idempotent-Replayed'])
    t.same(Object.keys(responses), Object.keys(responses).sort((a, b) => Number(a) - Number(b)), 'ordered by status')
  }
  t.equal(operation('plain').responses['409'], undefined)
  t.equal(operation('plain').responses['422'], undefined)
  // A declared 402 and the idempotency answers live side by side.
  t.ok(operation('declined').responses['402'])
  // The pattern is the key rule: 1 to 255 visible ASCII characters.
  const pattern = new RegExp(header('charge').schema.pattern)
  t.ok(pattern.test('a-key_1~!'))
  t.notOk(pattern.test('a key'))
})

t.test('explore and schema show idempotency on the actions that declare it', async (t) => {
  const server = await buildServer({ services: [paymentService({ runs: {} })] })
  t.teardown(() => server.close())
  const ask = async (body: Record<string, unknown>) => (await server.app.inject({ method: 'POST', url: '/api/services', payload: body })).json().data
  const listed = await ask({ intent: 'explore', service: 'pay', action: '*', payload: {} })
  const byName = new Map(listed.actions.map((action: { name: string }) => [action.name, action]))
  t.match(byName.get('charge'), { idempotency: 'required' })
  t.match(byName.get('note'), { idempotency: 'optional' })
  t.notOk('idempotency' in (byName.get('plain') as object), 'others keep the specification shape')
  t.match(await ask({ intent: 'explore', service: 'pay', action: 'charge', payload: {} }), { name: 'charge', idempotency: 'required' })
  const schema = await ask({ intent: 'schema', service: 'pay', action: 'charge', payload: { output: true } })
  t.equal(schema.charge.idempotency, 'required')
})
