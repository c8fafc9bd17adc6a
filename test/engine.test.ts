import t from 'tap'
import Type from 'typebox'
import { z } from 'zod'
import { createAction, createContext, createEngine, Err, Ok, messages, type Service } from '../lib/index.js'
import { createDiagnostics } from '../lib/diagnostics.js'

const context = createContext()

function service(actions: Service['actions'], name = 'svc'): Service {
  return { name, description: `${name} service`, actions }
}

t.test('registry', async (t) => {
  const a = createAction({ name: 'a', description: 'A', handler: () => Ok(1) })
  const b = createAction({ name: 'b', description: 'B', handler: () => Ok(2) })
  const engine = createEngine({ services: [service([a, b]), service([a], 'other')] })

  const services = engine.getServices()
  t.ok(services.ok)
  t.same(services.ok && services.value.map((s) => s.name), ['svc', 'other'])
  const actions = engine.getServiceActions('svc')
  t.same(actions.ok && actions.value.map((x) => x.name), ['a', 'b'])
  t.same(engine.getServiceActions('nope'), { ok: false, error: messages.serviceNotFound('nope'), code: 'FA_ERR_SERVICE_NOT_FOUND', data: {} })
  const found = engine.getAction('other', 'a')
  t.equal(found.ok && found.value, a)
  t.match(engine.getAction('svc', 'zzz'), { ok: false, error: messages.actionNotFound('svc', 'zzz') })
  t.match(engine.getAction('zzz', 'a'), { ok: false, error: messages.serviceNotFound('zzz') })
})

t.test('duplicates and dangling hooks throw at boot, naming them', async (t) => {
  const a = createAction({ name: 'a', description: 'A', handler: () => Ok(1) })
  t.throws(() => createEngine({ services: [service([a]), service([a])] }), { message: "Duplicate service name 'svc'" })
  t.throws(() => createEngine({ services: [service([a, a])] }), { message: "Duplicate action name 'a' in service 'svc'" })
  const hooked = createAction({
    name: 'hooked',
    description: 'H',
    hooks: { before: [{ service: 'svc', action: 'missing', isCritical: true }] },
    handler: () => Ok(1),
  })
  t.throws(() => createEngine({ services: [service([hooked])] }), { message: "Hook 'svc.missing' of action 'svc.hooked' does not exist" })
})

t.test('executeAction: lookups, results and exceptions', async (t) => {
  const engine = createEngine({
    services: [
      service([
        createAction({ name: 'ok', description: '', handler: (data) => Ok({ got: data }) }),
        createAction({ name: 'err', description: '', handler: () => Err('refused') }),
        createAction({ name: 'throws', description: '', handler: () => { throw new Error('boom') } }),
        createAction({ name: 'rejects', description: '', handler: async () => { throw new Error('async boom') } }),
        createAction({ name: 'throwsString', description: '', handler: () => { throw 'plain string' } }),
        createAction({ name: 'notResult', description: '', handler: (() => ({ hello: 1 })) as never }),
      ]),
    ],
  })
  t.same(await engine.executeAction('svc', 'ok', { x: 1 }, context), { ok: true, value: { got: { x: 1 } } })
  t.same(await engine.executeAction('svc', 'err', {}, context), { ok: false, error: 'refused' })
  t.same(await engine.executeAction('svc', 'throws', {}, context), { ok: false, error: 'boom' })
  t.same(await engine.executeAction('svc', 'rejects', {}, context), { ok: false, error: 'async boom' })
  t.same(await engine.executeAction('svc', 'throwsString', {}, context), { ok: false, error: 'plain string' })
  t.same(await engine.executeAction('svc', 'notResult', {}, context), { ok: false, error: messages.internal, code: 'FA_ERR_NOT_A_RESULT', data: {} })
  t.same(await engine.executeAction('nope', 'ok', {}, context), { ok: false, error: messages.serviceNotFound('nope'), code: 'FA_ERR_SERVICE_NOT_FOUND', data: {} })
  t.same(await engine.executeAction('svc', 'nope', {}, context), { ok: false, error: messages.actionNotFound('svc', 'nope'), code: 'FA_ERR_ACTION_NOT_FOUND', data: {} })
})

t.test('validation: TypeBox and Standard Schema, compiled at boot', async (t) => {
  const typebox = createAction({
    name: 'typebox',
    description: '',
    validation: Type.Object({ title: Type.String({ minLength: 1 }), count: Type.Integer({ minimum: 0 }) }),
    handler: (data) => Ok({ title: data.title.toUpperCase(), count: data.count + 1 }),
  })
  const zod = createAction({
    name: 'zod',
    description: '',
    validation: z.object({ title: z.string().min(1), tags: z.array(z.string()).default([]) }),
    handler: (data) => Ok({ title: data.title, tags: data.tags }),
  })
  const engine = createEngine({ services: [service([typebox, zod])] })
  t.same(await engine.executeAction('svc', 'typebox', { title: 'a', count: 1 }, context), { ok: true, value: { title: 'A', count: 2 } })
  const bad = await engine.executeAction('svc', 'typebox', { title: '', count: -1 }, context)
  t.same(bad, {
    ok: false,
    error: messages.validationFailed,
    code: 'FA_ERR_VALIDATION',
    data: {
      errors: [
        { path: '/title', message: 'must not have fewer than 1 characters' },
        { path: '/count', message: 'must be >= 0' },
      ],
    },
  })
  // zod output (with its default) reaches the handler
  t.same(await engine.executeAction('svc', 'zod', { title: 'x' }, context), { ok: true, value: { title: 'x', tags: [] } })
  const zodBad = await engine.executeAction('svc', 'zod', { title: 5, tags: ['a', 1] }, context)
  t.match(zodBad, { ok: false, error: messages.validationFailed, code: 'FA_ERR_VALIDATION' })
  t.same((zodBad as unknown as { data: { errors: { path: string }[] } }).data.errors.map((e) => e.path), ['/title', '/tags/1'])
})

t.test('pipeline order, hook chaining and shared hook state', async (t) => {
  const order: string[] = []
  const addA = createAction({
    name: 'addA',
    description: '',
    handler: (data: Record<string, unknown>, ctx) => {
      order.push('before:addA')
      ctx.updateHookState('seen', ['addA'])
      return Ok({ ...data, a: true })
    },
  })
  const addB = createAction({
    name: 'addB',
    description: '',
    handler: async (data: Record<string, unknown>, ctx) => {
      order.push('before:addB')
      await new Promise((resolve) => setImmediate(resolve))
      ;(ctx.hookContext.state.seen as string[]).push('addB')
      return Ok({ ...data, b: true })
    },
  })
  const wrap = createAction({
    name: 'wrap',
    description: '',
    handler: (data, ctx) => {
      order.push('after:wrap')
      return Ok({ wrapped: data, seen: ctx.hookContext.state.seen })
    },
  })
  const main = createAction({
    name: 'main',
    description: '',
    validation: Type.Object({ a: Type.Boolean(), b: Type.Boolean(), n: Type.Number() }),
    hooks: {
      before: [
        { service: 'svc', action: 'addA', isCritical: true },
        { service: 'svc', action: 'addB', isCritical: true },
      ],
      after: [{ service: 'svc', action: 'wrap', isCritical: true }],
    },
    handler: (data, ctx) => {
      order.push('handler')
      t.equal(ctx.hookContext.actionName, 'svc.main')
      t.same(ctx.hookContext.input, { n: 1 })
      return Ok({ sum: data.n + 1, a: data.a, b: data.b })
    },
  })
  const engine = createEngine({
    services: [service([addA, addB, wrap, main])],
    onBeforeActionHandler: ({ payload, action }) => {
      order.push(`global-before:${action.name}`)
      t.same(payload, { n: 1 }, 'the global before handler sees the original payload')
      return Ok('ignored')
    },
    onAfterActionHandler: ({ result, nileContext }) => {
      order.push('global-after')
      const log = nileContext.hookContext.log
      t.same(log.before.map((entry) => [entry.name, entry.passed]), [['svc.addA', true], ['svc.addB', true]])
      t.same(log.after.map((entry) => entry.name), ['svc.wrap'])
      return result.ok ? Ok({ final: result.value }) : result
    },
  })
  const result = await engine.executeAction('svc', 'main', { n: 1 }, context)
  t.same(order, ['global-before:main', 'before:addA', 'before:addB', 'handler', 'after:wrap', 'global-after'])
  t.same(result, { ok: true, value: { final: { wrapped: { sum: 2, a: true, b: true }, seen: ['addA', 'addB'] } } })
})

t.test('critical hooks halt; non-critical failures are logged and skipped', async (t) => {
  const calls: string[] = []
  const logged: unknown[] = []
  const deny = createAction({ name: 'deny', description: '', handler: () => Err('not allowed') })
  const explode = createAction({ name: 'explode', description: '', handler: () => { throw new Error('hook blew up') } })
  const tag = createAction({ name: 'tag', description: '', handler: (data: Record<string, unknown>) => Ok({ ...data, tagged: true }) })
  const critical = createAction({
    name: 'critical',
    description: '',
    hooks: { before: [{ service: 'svc', action: 'deny', isCritical: true }] },
    handler: () => {
      calls.push('critical')
      return Ok(1)
    },
  })
  const lenient = createAction({
    name: 'lenient',
    description: '',
    hooks: {
      before: [
        { service: 'svc', action: 'explode', isCritical: false },
        { service: 'svc', action: 'tag', isCritical: true },
      ],
      after: [{ service: 'svc', action: 'deny', isCritical: false }],
    },
    handler: (data) => Ok(data),
  })
  const criticalAfter = createAction({
    name: 'criticalAfter',
    description: '',
    hooks: { after: [{ service: 'svc', action: 'deny', isCritical: true }] },
    handler: () => Ok({ fine: true }),
  })
  const logger = {
    info: () => 'i',
    warn: (entry: unknown) => {
      logged.push(entry)
      return 'w'
    },
    error: () => 'e',
  }
  const engine = createEngine({
    services: [service([deny, explode, tag, critical, lenient, criticalAfter])],
    diagnostics: createDiagnostics(true, logger),
  })
  t.same(await engine.executeAction('svc', 'critical', {}, context), {
    ok: false,
    error: messages.hookFailed('svc.deny', 'not allowed'),
    code: 'FA_ERR_HOOK_FAILED',
    data: {},
  })
  t.same(calls, [], 'the handler did not run')
  t.same(await engine.executeAction('svc', 'lenient', { x: 1 }, context), { ok: true, value: { x: 1, tagged: true } })
  t.equal(logged.length, 2, 'both non-critical failures were logged')
  t.match(logged[0], { atFunction: 'engine.runHooks', message: /svc\.explode.*hook blew up/ })
  t.same(await engine.executeAction('svc', 'criticalAfter', {}, context), {
    ok: false,
    error: messages.hookFailed('svc.deny', 'not allowed'),
    code: 'FA_ERR_HOOK_FAILED',
    data: {},
  })
})

t.test('global handlers: before Err halts, throws become Err, after may replace an Err', async (t) => {
  let ran = 0
  const action = createAction({ name: 'a', description: '', handler: () => { ran++; return Err('handler said no') } })
  const halting = createEngine({ services: [service([action])], onBeforeActionHandler: () => Err('denied by policy') })
  t.same(await halting.executeAction('svc', 'a', {}, context), { ok: false, error: 'denied by policy' })
  t.equal(ran, 0)
  const throwing = createEngine({ services: [service([action])], onBeforeActionHandler: () => { throw new Error('policy crashed') } })
  t.same(await throwing.executeAction('svc', 'a', {}, context), { ok: false, error: 'policy crashed' })
  const rescuing = createEngine({
    services: [service([action])],
    onAfterActionHandler: ({ result }) => (result.ok ? result : Ok({ rescued: result.error })),
  })
  t.same(await rescuing.executeAction('svc', 'a', {}, context), { ok: true, value: { rescued: 'handler said no' } })
})

t.test('protected actions call the authenticator before the global before handler', async (t) => {
  const order: string[] = []
  const open = createAction({ name: 'open', description: '', handler: () => Ok('open') })
  const closed = createAction({ name: 'closed', description: '', isProtected: true, handler: () => Ok('closed') })
  const engine = createEngine({
    services: [service([open, closed])],
    onBeforeActionHandler: () => {
      order.push('before')
      return Ok(null)
    },
  })
  t.same(await engine.executeAction('svc', 'closed', {}, context), { ok: true, value: 'closed' }, 'no authenticator: not checked')
  engine.setAuthenticator(() => {
    order.push('auth')
    return { ok: false, error: 'Authentication failed: no token', status: 401, data: {} } as never
  })
  order.length = 0
  t.same(await engine.executeAction('svc', 'closed', {}, context), { ok: false, error: 'Authentication failed: no token', status: 401, data: {} })
  t.same(order, ['auth'])
  order.length = 0
  t.same(await engine.executeAction('svc', 'open', {}, context), { ok: true, value: 'open' })
  t.same(order, ['before'], 'an unprotected action skips authentication')
})

t.test('timeouts answer 504 instead of hanging', async (t) => {
  const never = createAction({ name: 'never', description: '', handler: () => new Promise<never>(() => {}) })
  const quick = createAction({ name: 'quick', description: '', timeout: 5_000, handler: async () => Ok('quick') })
  const slowOwn = createAction({ name: 'slowOwn', description: '', timeout: 20, handler: () => new Promise<never>(() => {}) })
  const engine = createEngine({ services: [service([never, quick, slowOwn])], actionTimeout: 30 })
  t.same(await engine.executeAction('svc', 'never', {}, context), {
    ok: false,
    error: messages.actionTimedOut('svc.never', 30),
    code: 'FA_ERR_ACTION_TIMEOUT',
    data: {},
  })
  t.same(await engine.executeAction('svc', 'quick', {}, context), { ok: true, value: 'quick' })
  t.same(await engine.executeAction('svc', 'slowOwn', {}, context), {
    ok: false,
    error: messages.actionTimedOut('svc.slowOwn', 20),
    code: 'FA_ERR_ACTION_TIMEOUT',
    data: {},
  })
})

t.test('global handlers that return a non-Result are a 500, logged for the developer', async (t) => {
  const errors: unknown[] = []
  const logger = { info: () => 'i', warn: () => 'w', error: (entry: unknown) => (errors.push(entry), 'e') }
  const action = createAction({ name: 'a', description: '', handler: () => Ok(1) })
  const before = createEngine({ services: [service([action])], diagnostics: createDiagnostics(true, logger), onBeforeActionHandler: (() => undefined) as never })
  t.same(await before.executeAction('svc', 'a', {}, context), { ok: false, error: messages.internal, code: 'FA_ERR_NOT_A_RESULT', data: {} })
  const after = createEngine({ services: [service([action])], diagnostics: createDiagnostics(true, logger), onAfterActionHandler: (() => 'oops') as never })
  t.same(await after.executeAction('svc', 'a', {}, context), { ok: false, error: messages.internal, code: 'FA_ERR_NOT_A_RESULT', data: {} })
  t.match(errors, [{ message: messages.notAResult('onBeforeActionHandler') }, { message: messages.notAResult('onAfterActionHandler') }])
})

t.test('an Err-shaped object from user code cannot choose its HTTP status', async (t) => {
  const { statusOf, toExternalResponse } = await import('../lib/answer.js')
  const sneaky = { ok: false as const, error: 'x', status: 200, data: { leaked: true } }
  t.equal(statusOf(sneaky), 400)
  t.same(toExternalResponse(sneaky, 's', 'a'), { status: false, message: 'x', data: {} })
})

t.test('a thrown Drizzle query error answers with the driver message, never the SQL', async (t) => {
  const { DrizzleQueryError } = await import('drizzle-orm/errors')
  const { thrownMessage } = await import('../lib/db/errors.js')
  const leaky = createAction({
    name: 'leaky',
    description: '',
    handler: () => {
      throw new DrizzleQueryError('select * from users where password = $1', ['hunter2'], new Error('relation "users" does not exist'))
    },
  })
  const engine = createEngine({ services: [service([leaky])], thrownMessage })
  t.same(await engine.executeAction('svc', 'leaky', {}, context), { ok: false, error: 'relation "users" does not exist' })
})

t.test('execute: the Result itself when nothing waited, a promise when something did; executeAction always a promise', async (t) => {
  const sync = createAction({ name: 'sync', description: 'S', validation: Type.Object({ n: Type.Number() }), handler: (data) => Ok({ n: data.n }) })
  const later = createAction({ name: 'later', description: 'L', handler: async () => Ok({ n: 2 }) })
  const thrower = createAction({ name: 'thrower', description: 'T', handler: () => { throw new Error('boom') } })
  const engine = createEngine({ services: [service([sync, later, thrower])] })

  const now = engine.execute('svc', 'sync', { n: 1 }, context)
  t.notOk(now instanceof Promise, 'a synchronous pipeline makes no promise')
  t.same(now, { ok: true, value: { n: 1 } })
  t.same(engine.execute('svc', 'sync', { n: 'x' }, context), await engine.executeAction('svc', 'sync', { n: 'x' }, context))
  t.same(engine.execute('svc', 'thrower', {}, context), { ok: false, error: 'boom' })
  t.same(engine.execute('nope', 'sync', {}, context), await engine.executeAction('nope', 'sync', {}, context))

  const pending = engine.execute('svc', 'later', {}, context)
  t.ok(pending instanceof Promise, 'an awaited handler gives a promise')
  t.same(await pending, { ok: true, value: { n: 2 } })

  const wrapped = engine.executeAction('svc', 'sync', { n: 3 }, context)
  t.ok(wrapped instanceof Promise)
  t.same(await wrapped, { ok: true, value: { n: 3 } })
})
