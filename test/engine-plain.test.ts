import { createHook } from 'node:async_hooks'
import t from 'tap'
import Type from 'typebox'
import { createAction, createContext, createEngine, Err, Fail, Ok, type Action, type Service } from '../lib/index.js'
import { buildServer } from './helpers/server.js'

/*
 * The engine's plain path (lib/engine.ts, `isPlain`): an action with no hooks, no global handlers, no
 * auth, no guard, no stream and no timeout runs without the pipeline's generators and with one scope
 * entry per request. These tests count what the path makes, and hold its answers to the pipeline's.
 */

// Every generator object of the process steps through %GeneratorPrototype%.next: counting its calls
// around a synchronous `engine.execute` counts the engine's generator steps (nothing else runs then).
const GeneratorPrototype = Object.getPrototypeOf(function* () {}).prototype as Generator
const next = GeneratorPrototype.next
let steps = 0
function countingSteps<T>(fn: () => T): { value: T; steps: number } {
  steps = 0
  GeneratorPrototype.next = function (this: Generator, ...args: [] | [unknown]) {
    steps++
    return next.apply(this, args)
  }
  try {
    return { value: fn(), steps }
  } finally {
    GeneratorPrototype.next = next
  }
}

const Task = Type.Object({ title: Type.String({ minLength: 1 }), count: Type.Integer({ minimum: 0 }) })

/** One action per row of the table; each answers the same way whichever path runs it. */
function actions(): Action[] {
  return [
    createAction({ name: 'ok', description: 'Ok of an object', validation: Task, handler: (data) => Ok({ title: data.title, count: data.count }) }),
    createAction({ name: 'scalar', description: 'Ok of a number', handler: () => Ok(42) }),
    createAction({ name: 'err', description: 'a plain Err', handler: () => Err('refused') }),
    createAction({
      name: 'declared',
      description: 'a declared error, and one it does not declare',
      validation: Type.Object({ code: Type.String() }),
      errors: { NOT_FOUND: { status: 404, message: 'No such thing', data: Type.Object({ id: Type.String() }) } },
      handler: (data) => (data.code === 'NOT_FOUND' ? Fail('NOT_FOUND', { id: 'x' }) : Fail('NOPE' as 'NOT_FOUND', { id: 'y' })),
    }),
    createAction({ name: 'throws', description: 'throws', handler: () => { throw new Error('boom') } }),
    createAction({ name: 'rejects', description: 'rejects', handler: async () => { throw new Error('async boom') } }),
    createAction({ name: 'later', description: 'Ok after an await', handler: async (data) => Ok({ later: data }) }),
    createAction({ name: 'laterErr', description: 'Err after an await', handler: async () => Err('later refused') }),
    { name: 'notAResult', description: 'returns a bare value', handler: () => ({ bare: true }) } as unknown as Action,
    createAction({
      name: 'hookState',
      description: 'reads and writes the hook context',
      handler: (data, context) => {
        context.updateHookState('seen', true)
        const hook = context.hookContext
        return Ok({ actionName: hook.actionName, input: hook.input, state: hook.state, log: hook.log })
      },
    }),
    {
      name: 'asyncValidated',
      description: 'a Standard Schema validator that answers with a promise',
      validation: {
        '~standard': {
          version: 1,
          vendor: 'test',
          validate: async (value: unknown) =>
            typeof (value as { n?: unknown })?.n === 'number' ? { value } : { issues: [{ message: 'n must be a number', path: ['n'] }] },
        },
      },
      handler: (data: unknown) => Ok({ got: data }),
    } as unknown as Action,
  ]
}

const rows: Array<{ action: string; payload: unknown }> = [
  { action: 'ok', payload: { title: 'Write the tests', count: 3 } },
  { action: 'ok', payload: { title: '', count: -1 } },
  { action: 'ok', payload: { title: 'extra', count: 1, more: 'kept out' } },
  { action: 'scalar', payload: {} },
  { action: 'err', payload: {} },
  { action: 'declared', payload: { code: 'NOT_FOUND' } },
  { action: 'declared', payload: { code: 'NOPE' } },
  { action: 'throws', payload: {} },
  { action: 'rejects', payload: {} },
  { action: 'later', payload: { a: 1 } },
  { action: 'laterErr', payload: {} },
  { action: 'notAResult', payload: {} },
  { action: 'hookState', payload: { x: 1 } },
  { action: 'asyncValidated', payload: { n: 1 } },
  { action: 'asyncValidated', payload: { n: 'one' } },
]

const service = (list: Action[]): Service => ({ name: 'svc', description: 'the table', actions: list })

t.test('an action with nothing around its handler runs without a generator; the pipeline still runs the others', async (t) => {
  const context = createContext()
  const plain = createAction({ name: 'plain', description: '', validation: Task, handler: (data) => Ok(data) })
  const hook = createAction({ name: 'hook', description: '', handler: (data) => Ok(data) })
  const hooked = createAction({ name: 'hooked', description: '', hooks: { after: [{ service: 'svc', action: 'hook', isCritical: false }] }, handler: (data) => Ok(data) })
  const timed = createAction({ name: 'timed', description: '', timeout: 60_000, handler: (data) => Ok(data) })
  const engine = createEngine({ services: [service([plain, hook, hooked, timed])] })
  const payload = { title: 't', count: 1 }

  const onPlain = countingSteps(() => engine.execute('svc', 'plain', payload, context))
  t.same(onPlain.value, { ok: true, value: payload })
  t.equal(onPlain.steps, 0, 'no generator step for a plain action')
  const refused = countingSteps(() => engine.execute('svc', 'plain', { title: '' }, context))
  t.match(refused.value, { ok: false, code: 'FA_ERR_VALIDATION' })
  const onHooked = countingSteps(() => engine.execute('svc', 'hooked', payload, context))
  t.same(onHooked.value, { ok: true, value: payload })
  t.ok(onHooked.steps > 0, `an after hook keeps the pipeline (${onHooked.steps} steps)`)
  t.ok(countingSteps(() => engine.execute('svc', 'timed', payload, context)).steps > 0, 'a declared timeout keeps the pipeline')

  // What the engine is given decides too: a global handler, a guard, a protected action with an authenticator.
  const withGlobal = createEngine({ services: [service([plain])], onAfterActionHandler: ({ result }) => result })
  t.ok(countingSteps(() => withGlobal.execute('svc', 'plain', payload, context)).steps > 0, 'a global after handler keeps the pipeline')
  const guarded = createEngine({ services: [service([plain])] })
  t.equal(countingSteps(() => guarded.execute('svc', 'plain', payload, context)).steps, 0)
  guarded.addGuard({ service: 'svc', action: 'plain' }, () => Ok(true))
  t.ok(countingSteps(() => guarded.execute('svc', 'plain', payload, context)).steps > 0, 'a guard added after boot keeps the pipeline')
  const secured = createAction({ name: 'plain', description: '', isProtected: true, handler: (data) => Ok(data) })
  const authenticated = createEngine({ services: [service([secured])], authenticate: () => Ok({ userId: 'u', claims: {} }) })
  t.ok(countingSteps(() => authenticated.execute('svc', 'plain', payload, context)).steps > 0, 'a protected action keeps the pipeline')
})

t.test('one scope entry per request on the plain path', async (t) => {
  const server = await buildServer({ services: [service(actions())] })
  t.teardown(() => server.close())
  let scopes = 0
  const hook = createHook({ init: (_id, type) => void (type === 'fastify-actions.scope' && scopes++) }).enable()
  t.teardown(() => void hook.disable())
  const request = { method: 'POST' as const, url: '/api/services', payload: { intent: 'execute', service: 'svc', action: 'ok', payload: { title: 'a', count: 1 } } }
  await server.app.inject(request)
  scopes = 0
  for (let i = 0; i < 10; i++) t.equal((await server.app.inject(request)).statusCode, 200)
  t.equal(scopes, 10, 'one scope per request')
  hook.disable()
})

t.test('the plain path and the pipeline answer the same table the same way: statuses, envelopes, logs', async (t) => {
  type Line = { level: number; msg: string }
  const serve = async (actionTimeout?: number) => {
    const lines: Line[] = []
    const stream = { write: (line: string) => void lines.push(JSON.parse(line) as Line) }
    const server = await buildServer({ services: [service(actions())], actionTimeout, rest: { fastify: { logger: { level: 'warn', stream } } } })
    t.teardown(() => server.close())
    return { server, lines }
  }
  // An engine-wide timeout puts every action on the pipeline; the handlers answer well within it.
  const plain = await serve()
  const pipeline = await serve(60_000)
  const context = plain.server.context
  for (const { action, payload } of rows) {
    const name = `${action} ${JSON.stringify(payload)}`
    t.equal(countingSteps(() => plain.server.engine.execute('svc', action, payload, context)).steps, 0, `${name}: plain`)
    const request = { method: 'POST' as const, url: '/api/services', payload: { intent: 'execute', service: 'svc', action, payload } }
    plain.lines.length = 0
    pipeline.lines.length = 0
    const [a, b] = await Promise.all([plain.server.app.inject(request), pipeline.server.app.inject(request)])
    t.equal(a.statusCode, b.statusCode, `${name}: status`)
    t.equal(a.body, b.body, `${name}: body`)
    t.equal(a.headers['content-type'], b.headers['content-type'], `${name}: content type`)
    const logged = (lines: Line[]) => lines.map(({ level, msg }) => ({ level, msg }))
    t.same(logged(plain.lines), logged(pipeline.lines), `${name}: logs`)
    // The engine's own results, not only the wire's.
    t.same(await plain.server.engine.executeAction('svc', action, payload, context), await pipeline.server.engine.executeAction('svc', action, payload, context), `${name}: result`)
  }
  // Spot checks that the table is what it says (not two identical wrong answers).
  const answer = async (action: string, payload: unknown) =>
    (await plain.server.app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'execute', service: 'svc', action, payload } })).json()
  t.same(await answer('throws', {}), { status: false, message: 'boom', data: {} })
  t.same(await answer('declared', { code: 'NOT_FOUND' }), { status: false, message: 'No such thing', data: { code: 'NOT_FOUND', id: 'x' } })
  t.same(await answer('hookState', { x: 1 }), {
    status: true,
    message: "Action 'svc.hookState' executed",
    data: { actionName: 'svc.hookState', input: { x: 1 }, state: { seen: true }, log: { before: [], after: [] } },
  })
  t.match(await answer('ok', { title: '', count: -1 }), { status: false, message: 'Validation failed', data: { errors: [{ path: '/title' }, { path: '/count' }] } })
})
