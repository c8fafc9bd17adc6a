import t from 'tap'
import Type from 'typebox'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  createAction,
  createContext,
  createEngine,
  getContext,
  getRequestStore,
  messages,
  Ok,
  runInRequestScope,
} from '../lib/index.js'
import { createRequestStore } from '../lib/context.js'
import { buildServer, execute } from './helpers/server.js'

// First, in a process where no server was created yet.
t.test('getContext before createServer throws its exact text', async (t) => {
  t.throws(() => getContext(), { message: messages.notInitialized })
})

t.test('key-value store: get, set and a read-only view of the map', async (t) => {
  const context = createContext({ resources: { cache: 'c' } })
  context.set('answer', 42)
  t.equal(context.get<number>('answer'), 42)
  t.equal(context.get('missing'), undefined)
  t.equal(context.store.get('answer'), 42)
  t.notOk('set' in context.store, 'the view has no set')
  t.notOk('delete' in context.store, 'the view has no delete')
  t.same([...context.store], [['answer', 42]])
  context.store.forEach((_value, _key, view) => t.notOk('set' in view, 'forEach hands out the view, not the map'))
  t.equal(context.store.size, 1)
  t.same(context.resources, { cache: 'c' })
})

t.test('sessions: per context outside a request, per request inside one', async (t) => {
  const a = createContext()
  const b = createContext()
  a.setSession('rest', { user: 'a' })
  t.same(a.getSession('rest'), { user: 'a' })
  t.equal(b.getSession('rest'), undefined, 'contexts do not share sessions')
  await runInRequestScope(createRequestStore(), async () => {
    t.equal(a.getSession('rest'), undefined, 'a request starts with its own sessions')
    a.setSession('rest', { user: 'in-request' })
    await sleep(1)
    t.same(a.getSession('rest'), { user: 'in-request' })
  })
  t.same(a.getSession('rest'), { user: 'a' }, 'the request did not touch the context sessions')
})

t.test('request scope: rest/ws/rpc are per request, undefined outside', async (t) => {
  const context = createContext()
  t.equal(getRequestStore(), undefined)
  t.equal(context.get('rest'), undefined)
  context.set('rest', { ignored: true })
  t.equal(context.get('rest'), undefined, 'outside a request, rest is never shared')
  const store = createRequestStore()
  runInRequestScope(store, () => {
    t.equal(getRequestStore(), store)
    context.set('ws', { socket: 1 })
    t.same(context.get('ws'), { socket: 1 })
  })
  t.same(store.ws, { socket: 1 })
  t.equal(context.get('ws'), undefined)
})

t.test('getAuth and getUser', async (t) => {
  const context = createContext()
  t.equal(context.getAuth(), undefined)
  t.equal(context.getUser(), undefined)
  const store = createRequestStore()
  store.auth = { userId: 'u1', organizationId: 'o1', claims: { sub: 'u1', role: 'admin' } }
  runInRequestScope(store, () => {
    t.same(context.getAuth(), store.auth)
    t.same(context.getUser(), { sub: 'u1', role: 'admin', userId: 'u1', organizationId: 'o1' })
  })
})

t.test('hook context mutators outside an execution use an idle context', async (t) => {
  const context = createContext()
  context.resetHookContext('boot', { x: 1 })
  context.updateHookState('k', 'v')
  context.addHookLog('before', { name: 's.a', input: 1, output: 2, passed: true })
  context.setHookError('e')
  context.setHookOutput('o')
  t.match(context.hookContext, { actionName: 'boot', input: { x: 1 }, state: { k: 'v' }, error: 'e', output: 'o' })
  t.equal(context.hookContext.log.before.length, 1)
})

t.test('300 concurrent executions never see each other’s hook state or request data', async (t) => {
  const context = createContext()
  const remember = createAction({
    name: 'remember',
    description: '',
    validation: Type.Object({ id: Type.Integer() }),
    handler: async (data, ctx) => {
      ctx.updateHookState('id', data.id)
      ctx.setSession('rest', { id: data.id })
      await sleep(Math.random() * 5)
      return Ok(data)
    },
  })
  const check = createAction({
    name: 'check',
    description: '',
    hooks: { before: [{ service: 's', action: 'remember', isCritical: true }] },
    validation: Type.Object({ id: Type.Integer() }),
    handler: async (data, ctx) => {
      await sleep(Math.random() * 5)
      return Ok({
        id: data.id,
        state: ctx.hookContext.state.id,
        actionName: ctx.hookContext.actionName,
        input: (ctx.hookContext.input as { id: number }).id,
        session: ctx.getSession('rest')?.id,
        logged: ctx.hookContext.log.before.map((entry) => (entry.output as { id: number }).id),
      })
    },
  })
  const engine = createEngine({ services: [{ name: 's', description: '', actions: [remember, check] }] })
  const results = await Promise.all(
    Array.from({ length: 300 }, (_, id) =>
      runInRequestScope(createRequestStore(), () => engine.executeAction('s', 'check', { id }, context)),
    ),
  )
  const mixed = results.filter((result, id) => {
    if (!result.ok) return true
    const v = result.value as Record<string, unknown>
    return v.id !== id || v.state !== id || v.input !== id || v.session !== id || v.actionName !== 's.check' || (v.logged as number[]).join() !== String(id)
  })
  t.equal(mixed.length, 0, 'every execution saw only its own state')
})

t.test('executeAction with { request }: the execution, its hooks and its async steps see that store; nothing outside it does', async (t) => {
  const context = createContext()
  const seen: unknown[] = []
  const note = createAction({
    name: 'note',
    description: '',
    handler: (data, ctx) => {
      seen.push(ctx.get('rest'))
      return Ok(data)
    },
  })
  const read = createAction({
    name: 'read',
    description: '',
    hooks: { before: [{ service: 's', action: 'note', isCritical: true }] },
    handler: async (_data, ctx) => {
      await sleep(1)
      return Ok({ rest: ctx.get('rest'), store: getRequestStore() === stores[0], session: ctx.getSession('rest') })
    },
  })
  const engine = createEngine({ services: [{ name: 's', description: '', actions: [note, read] }] })
  const stores = [createRequestStore({ id: 'first' }), createRequestStore({ id: 'second' })]
  stores[0].sessions.rest = { user: 'a' }
  const [first, second] = await Promise.all(stores.map((request) => engine.executeAction('s', 'read', {}, context, { request })))
  t.same(first, { ok: true, value: { rest: { id: 'first' }, store: true, session: { user: 'a' } } })
  t.same(second, { ok: true, value: { rest: { id: 'second' }, store: false, session: undefined } })
  t.same(seen, [{ id: 'first' }, { id: 'second' }], 'the before hook ran in its execution\'s request')
  t.equal(getRequestStore(), undefined, 'no scope is left behind')
})

t.test('through HTTP: context.get("rest") is the request, and concurrent requests stay apart', async (t) => {
  const probe = createAction({
    name: 'probe',
    description: '',
    validation: Type.Object({ id: Type.Integer() }),
    handler: async (data, ctx) => {
      const rest = ctx.get<{ req: { headers: Record<string, string> } }>('rest')
      ctx.setSession('rest', { id: data.id })
      ctx.updateHookState('id', data.id)
      await sleep(Math.random() * 5)
      return Ok({ header: rest?.req.headers['x-id'], session: ctx.getSession('rest')?.id, state: ctx.hookContext.state.id })
    },
  })
  const server = await buildServer({ services: [{ name: 's', description: '', actions: [probe] }] })
  t.teardown(() => server.close())
  t.equal(getContext(), server.context, 'getContext returns the context of the server created last')
  const answers = await Promise.all(
    Array.from({ length: 300 }, (_, id) => execute(server.app, 's', 'probe', { id }, { headers: { 'x-id': String(id) } })),
  )
  const wrong = answers.filter(
    (answer, id) => answer.statusCode !== 200 || answer.body.data.header !== String(id) || answer.body.data.session !== id || answer.body.data.state !== id,
  )
  t.equal(wrong.length, 0)
  t.equal(server.context.get('rest'), undefined, 'no request data leaks outside the request')
})
