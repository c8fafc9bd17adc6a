import t from 'tap'
import Type from 'typebox'
import { z } from 'zod'
import { createAction, Ok, messages, type Service } from '../lib/index.js'
import { buildServer, execute, post } from './helpers/server.js'
import { echoService } from './helpers/fixtures.js'

const hidden = createAction({ name: 'hidden', description: 'Hidden from REST discovery', visibility: { rest: false }, handler: () => Ok({ secret: true }) })
const described = createAction({
  name: 'described',
  description: 'Has everything explore shows',
  isProtected: false,
  accessControl: ['admin', 'editor'],
  meta: { since: '1.0' },
  validation: z.object({ name: z.string() }),
  hooks: { before: [{ service: 'tasks', action: 'list', isCritical: false }], after: [] },
  handler: (data) => Ok({ name: data.name }),
})
const withHidden: Service = { ...echoService, meta: { version: '2' }, actions: [...echoService.actions, hidden, described] }
const other: Service = { name: 'other', description: 'Another service', actions: [createAction({ name: 'ping', description: 'Ping', handler: () => Ok('pong') })] }

t.test('execute', async (t) => {
  const server = await buildServer({ services: [withHidden, other] })
  t.teardown(() => server.close())
  const { app } = server

  t.test('Ok with an object becomes data', async (t) => {
    const answer = await execute(app, 'tasks', 'echo', { title: 'a', count: 1 })
    t.equal(answer.statusCode, 200)
    t.same(answer.body, { status: true, message: messages.executed('tasks', 'echo'), data: { title: 'a', count: 1 } })
  })
  t.test('Ok with an array or a primitive becomes data.result', async (t) => {
    t.same((await execute(app, 'tasks', 'list')).body, { status: true, message: messages.executed('tasks', 'list'), data: { result: [1, 2, 3] } })
    t.same((await execute(app, 'other', 'ping')).body, { status: true, message: messages.executed('other', 'ping'), data: { result: 'pong' } })
  })
  t.test('Err is a 400 with the text', async (t) => {
    const answer = await execute(app, 'tasks', 'fails')
    t.equal(answer.statusCode, 400)
    t.same(answer.body, { status: false, message: 'it failed', data: {} })
  })
  t.test('a thrown handler is a 400 with the exception message', async (t) => {
    const answer = await execute(app, 'tasks', 'throws')
    t.equal(answer.statusCode, 400)
    t.same(answer.body, { status: false, message: 'handler exploded', data: {} })
  })
  t.test('validation failure is a 400 with data.errors', async (t) => {
    const answer = await execute(app, 'tasks', 'echo', { title: '', count: 'x' })
    t.equal(answer.statusCode, 400)
    t.same(answer.body, {
      status: false,
      message: messages.validationFailed,
      data: {
        errors: [
          { path: '/title', message: 'must not have fewer than 1 characters' },
          { path: '/count', message: 'must be integer' },
        ],
      },
    })
  })
  t.test('unknown service or action is a 400 with the engine text', async (t) => {
    const noService = await execute(app, 'nope', 'echo')
    t.equal(noService.statusCode, 400)
    t.same(noService.body, { status: false, message: messages.serviceNotFound('nope'), data: {} })
    const noAction = await execute(app, 'tasks', 'nope')
    t.equal(noAction.statusCode, 400)
    t.same(noAction.body, { status: false, message: messages.actionNotFound('tasks', 'nope'), data: {} })
  })
  t.test('a wildcard in service or action is a 400', async (t) => {
    for (const [service, action] of [['*', 'echo'], ['tasks', '*'], ['*', '*']]) {
      const answer = await execute(app, service, action)
      t.equal(answer.statusCode, 400)
      t.same(answer.body, { status: false, message: messages.wildcardExecute(service, action), data: {} })
    }
  })
  t.test('a hidden action can still be executed', async (t) => {
    const answer = await execute(app, 'tasks', 'hidden')
    t.equal(answer.statusCode, 200)
    t.same(answer.body.data, { secret: true })
  })
  t.test('application/*+json bodies are JSON too', async (t) => {
    const answer = await post(app, JSON.stringify({ intent: 'execute', service: 'other', action: 'ping', payload: {} }), {
      headers: { 'content-type': 'application/vnd.api+json' },
    })
    t.equal(answer.statusCode, 200)
  })
})

t.test('bad bodies', async (t) => {
  const server = await buildServer({ rest: { bodyLimit: 4096 } })
  t.teardown(() => server.close())
  const { app } = server
  const invalidBody = { status: false, message: messages.invalidBody, data: {} }

  for (const [name, payload, contentType] of [
    ['broken JSON', '{"intent":', 'application/json'],
    ['empty JSON body', '', 'application/json'],
    ['JSON with a __proto__ key', '{"intent":"execute","service":"tasks","action":"echo","payload":{"__proto__":{"polluted":true}}}', 'application/json'],
    ['JSON with constructor.prototype', '{"payload":{"constructor":{"prototype":{"polluted":true}}}}', 'application/json'],
  ] as const) {
    t.test(name, async (t) => {
      const answer = await post(app, payload, { headers: { 'content-type': contentType } })
      t.equal(answer.statusCode, 400)
      t.same(answer.body, invalidBody)
      t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype stays clean')
    })
  }
  t.test('no body at all', async (t) => {
    const answer = await post(app, undefined)
    t.equal(answer.statusCode, 400)
    t.same(answer.body, invalidBody)
  })
  t.test('a body that fails the envelope schema lists the issues', async (t) => {
    const answer = await post(app, { intent: 'destroy', service: 1, payload: [] })
    t.equal(answer.statusCode, 400)
    t.same(answer.body, {
      status: false,
      message: messages.invalidRequest,
      data: {
        errors: [
          { path: '/intent', message: "must be one of 'explore', 'execute', 'schema'" },
          { path: '/service', message: 'must be a string' },
          { path: '/action', message: 'must be a string' },
          { path: '/payload', message: 'must be an object' },
        ],
      },
    })
    for (const body of [[], 'a string', 42, null]) {
      const other = await post(app, JSON.stringify(body), { headers: { 'content-type': 'application/json' } })
      t.equal(other.statusCode, 400, `body ${JSON.stringify(body)}`)
      t.equal(other.body.status, false)
    }
  })
  t.test('deeply nested JSON is a 4xx, never a 500', async (t) => {
    const deep = '{"a":'.repeat(1500) + '1' + '}'.repeat(1500)
    const answer = await post(app, deep, { headers: { 'content-type': 'application/json' } })
    t.ok(answer.statusCode >= 400 && answer.statusCode < 500, `got ${answer.statusCode}`)
    t.equal(answer.body.status, false)
  })
  t.test('a body over the body limit is a 413', async (t) => {
    const big = JSON.stringify({ intent: 'execute', service: 'tasks', action: 'echo', payload: { title: 'x'.repeat(5000), count: 1 } })
    const answer = await post(app, big, { headers: { 'content-type': 'application/json' } })
    t.equal(answer.statusCode, 413)
    t.same(answer.body, { status: false, message: messages.bodyTooLarge, data: {} })
  })
  for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'application/octet-stream']) {
    t.test(`${contentType} is a 415 and never executed`, async (t) => {
      const body = JSON.stringify({ intent: 'execute', service: 'tasks', action: 'fails', payload: {} })
      const answer = await post(app, body, { headers: { 'content-type': contentType } })
      t.equal(answer.statusCode, 415)
      t.same(answer.body, { status: false, message: messages.unsupportedMediaType, data: {} })
    })
  }
})

t.test('explore', async (t) => {
  const server = await buildServer({ services: [withHidden, other] })
  t.teardown(() => server.close())
  const explore = (service: string, action: string, payload = {}) => post(server.app, { intent: 'explore', service, action, payload })

  t.test('all services', async (t) => {
    const answer = await explore('*', 'anything')
    t.equal(answer.statusCode, 200)
    t.same(answer.body, {
      status: true,
      message: 'Services listed',
      data: {
        services: [
          { name: 'tasks', description: 'Test tasks', meta: { version: '2' }, actions: ['echo', 'fails', 'throws', 'list', 'described'] },
          { name: 'other', description: 'Another service', actions: ['ping'] },
        ],
      },
    })
  })
  t.test('one service', async (t) => {
    const answer = await explore('other', '*')
    t.same(answer.body, {
      status: true,
      message: "Actions of service 'other' listed",
      data: { actions: [{ name: 'ping', description: 'Ping', isProtected: false, validation: false, accessControl: [] }] },
    })
    const tasks = await explore('tasks', '*')
    t.same(tasks.body.data.actions.find((a: { name: string }) => a.name === 'described'), {
      name: 'described',
      description: 'Has everything explore shows',
      isProtected: false,
      validation: true,
      accessControl: ['admin', 'editor'],
    })
    t.notOk(tasks.body.data.actions.some((a: { name: string }) => a.name === 'hidden'), 'hidden actions are omitted')
  })
  t.test('one action', async (t) => {
    const answer = await explore('tasks', 'described')
    t.same(answer.body, {
      status: true,
      message: "Action 'tasks.described' described",
      data: {
        name: 'described',
        description: 'Has everything explore shows',
        isProtected: false,
        accessControl: ['admin', 'editor'],
        hooks: { before: [{ service: 'tasks', action: 'list', isCritical: false }], after: [] },
        meta: { since: '1.0' },
      },
    })
    const bare = await explore('other', 'ping')
    t.same(bare.body.data, { name: 'ping', description: 'Ping', isProtected: false, accessControl: null, hooks: { before: [], after: [] }, meta: null })
  })
  t.test('unknown or hidden is a 400 with the engine text', async (t) => {
    for (const [service, action, message] of [
      ['nope', '*', messages.serviceNotFound('nope')],
      ['nope', 'x', messages.serviceNotFound('nope')],
      ['tasks', 'nope', messages.actionNotFound('tasks', 'nope')],
      ['tasks', 'hidden', messages.actionNotFound('tasks', 'hidden')],
    ]) {
      const answer = await explore(service, action)
      t.equal(answer.statusCode, 400)
      t.same(answer.body, { status: false, message, data: {} })
    }
  })
})

t.test('schema', async (t) => {
  const server = await buildServer({ services: [withHidden, other] })
  t.teardown(() => server.close())
  const schema = (service: string, action: string) => post(server.app, { intent: 'schema', service, action, payload: {} })
  const echoSchema = {
    type: 'object',
    required: ['title', 'count'],
    properties: { title: { type: 'string', minLength: 1 }, count: { type: 'integer', minimum: 0 } },
  }

  t.test('all', async (t) => {
    const answer = await schema('*', '*')
    t.equal(answer.statusCode, 200)
    t.equal(answer.body.status, true)
    t.same(Object.keys(answer.body.data), ['tasks', 'other'])
    t.same(Object.keys(answer.body.data.tasks), ['echo', 'fails', 'throws', 'list', 'described'])
    t.same(answer.body.data.tasks.echo, echoSchema)
    t.equal(answer.body.data.tasks.fails, null, 'no validation: null')
    t.match(answer.body.data.tasks.described, { type: 'object', properties: { name: { type: 'string' } } }, 'Standard JSON Schema from zod')
    t.same(answer.body.data.other, { ping: null })
  })
  t.test('one service and one action', async (t) => {
    const service = await schema('tasks', '*')
    t.same(service.body.data.echo, echoSchema)
    t.notOk('hidden' in service.body.data)
    const action = await schema('tasks', 'echo')
    t.same(action.body, { status: true, message: "Schema of action 'tasks.echo' exported", data: { echo: echoSchema } })
  })
  t.test('a validator without JSON Schema export gives null', async (t) => {
    const custom = createAction({
      name: 'custom',
      description: '',
      validation: { '~standard': { version: 1, vendor: 'custom', validate: (value: unknown) => ({ value }) } },
      handler: () => Ok(1),
    })
    const s = await buildServer({ services: [{ name: 'c', description: '', actions: [custom] }] })
    t.teardown(() => s.close())
    const answer = await post(s.app, { intent: 'schema', service: 'c', action: 'custom', payload: {} })
    t.same(answer.body.data, { custom: null })
  })
  t.test('unknown or hidden is a 400', async (t) => {
    const answer = await schema('tasks', 'hidden')
    t.equal(answer.statusCode, 400)
    t.same(answer.body, { status: false, message: messages.actionNotFound('tasks', 'hidden'), data: {} })
  })
})

t.test('discovery protection', async (t) => {
  const off = await buildServer({ rest: { discovery: undefined } })
  const secret = await buildServer({ rest: { discovery: { enabled: true, secret: 's3cret' } } })
  t.teardown(() => Promise.all([off.close(), secret.close()]))
  for (const intent of ['explore', 'schema']) {
    const disabled = await post(off.app, { intent, service: '*', action: '*', payload: {} })
    t.equal(disabled.statusCode, 403)
    t.same(disabled.body, { status: false, message: messages.discoveryDisabled, data: {} })
    for (const payload of [{}, { discoverySecret: 'wrong' }, { discoverySecret: 's3cre' }, { discoverySecret: 42 }]) {
      const wrong = await post(secret.app, { intent, service: '*', action: '*', payload })
      t.equal(wrong.statusCode, 403)
      t.same(wrong.body, { status: false, message: messages.discoverySecret, data: {} })
    }
    const right = await post(secret.app, { intent, service: '*', action: '*', payload: { discoverySecret: 's3cret' } })
    t.equal(right.statusCode, 200)
    t.equal(right.body.status, true)
  }
  const executes = await execute(off.app, 'tasks', 'list')
  t.equal(executes.statusCode, 200, 'execute is not gated by discovery')
})

t.test('a schema with typed fields validates before the handler and types data', async (t) => {
  let calls = 0
  const typed = createAction({
    name: 'typed',
    description: '',
    validation: Type.Object({ n: Type.Integer() }),
    handler: (data) => {
      calls++
      return Ok({ doubled: data.n * 2 })
    },
  })
  const server = await buildServer({ services: [{ name: 'm', description: '', actions: [typed] }] })
  t.teardown(() => server.close())
  t.same((await execute(server.app, 'm', 'typed', { n: 4 })).body.data, { doubled: 8 })
  t.equal((await execute(server.app, 'm', 'typed', { n: 'four' })).statusCode, 400)
  t.equal(calls, 1, 'the handler never saw the invalid payload')
})

t.test('a BigInt in a result is written as a string, not a 500', async (t) => {
  const big = createAction({ name: 'big', description: '', handler: () => Ok({ n: 9007199254740993n, nested: [1n] }) })
  const server = await buildServer({ services: [{ name: 'b', description: '', actions: [big] }] })
  t.teardown(() => server.close())
  const answer = await execute(server.app, 'b', 'big')
  t.equal(answer.statusCode, 200)
  t.same(answer.body, { status: true, message: messages.executed('b', 'big'), data: { n: '9007199254740993', nested: ['1'] } })
})
