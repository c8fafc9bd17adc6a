/**
 * The rules of `fastify-actions diff`, one table row per rule: a contract before, the same contract
 * changed, and the class each consumer (typed client, REST, agents) must get. No project is built
 * here; test/contract-cli.test.ts runs the commands on fixture projects.
 */
import t from 'tap'
import type { Contract, ContractAction } from '../lib/cli/contract.js'
import { classOf, diffContracts, type Consumer } from '../lib/cli/contract-diff.js'
import { classifyFor, compareSchemas, type ChangeClass } from '../lib/cli/schema-changes.js'

const str = (extra: Record<string, unknown> = {}) => ({ type: 'string', ...extra })
const obj = (properties: Record<string, unknown>, required: string[] = Object.keys(properties), extra: Record<string, unknown> = {}) => ({ type: 'object', properties, required, ...extra })

const action = (over: Partial<ContractAction> = {}): ContractAction => ({
  service: 'tasks',
  action: 'create',
  description: 'Creates a task',
  visible: true,
  stream: false,
  upload: false,
  auth: { protected: false, accessControl: [] },
  route: 'POST /api/services/tasks/create',
  tool: 'tasks_create',
  input: obj({ title: str({ maxLength: 200 }), notes: str() }, ['title']),
  output: obj({ id: str(), title: str(), state: { enum: ['open', 'done'] } }),
  events: null,
  errors: { NOT_FOUND: { status: 404, message: 'Not found', data: obj({ id: str() }) } },
  deprecated: null,
  ...over,
})
const stream = (over: Partial<ContractAction> = {}) => action({ action: 'watch', stream: true, output: null, events: obj({ n: { type: 'integer' }, at: str() }), route: 'POST /api/services/tasks/watch', tool: 'tasks_watch', ...over })

const contract = (actions: ContractAction[], over: Partial<Contract> = {}): Contract => ({
  contract: 1,
  endpoint: 'POST /api/services',
  mcp: '/api/mcp',
  actions: Object.fromEntries(actions.map((a) => [`${a.service}.${a.action}`, a])),
  openapi: {},
  tools: [],
  ...over,
})

const ALL = { client: 'breaking', rest: 'breaking', agents: 'breaking' } as const
const each = (value: ChangeClass) => ({ client: value, rest: value, agents: value })

interface Row {
  rule: string
  before: Contract
  after: Contract
  /** The one change expected: where, and its class per consumer. */
  where: string
  consumers: Partial<Record<Consumer, ChangeClass>>
  what?: RegExp
  note?: RegExp
}

const one = (before: ContractAction, after: ContractAction) => ({ before: contract([before]), after: contract([after]) })
const PAST = '2020-06-01'
const FUTURE = '2999-01-01'

const rows: Row[] = [
  // input: an input that accepts less breaks callers
  { rule: 'input: a required field added', ...one(action(), action({ input: obj({ title: str({ maxLength: 200 }), notes: str(), due: str() }, ['title', 'due']) })), where: 'input.due', consumers: ALL },
  { rule: 'input: an optional field added', ...one(action(), action({ input: obj({ title: str({ maxLength: 200 }), notes: str(), due: str() }, ['title']) })), where: 'input.due', consumers: each('additive') },
  { rule: 'input: maxLength lowered (narrowed)', ...one(action(), action({ input: obj({ title: str({ maxLength: 100 }), notes: str() }, ['title']) })), where: 'input.title', consumers: ALL, what: /maxLength 200 → 100/ },
  { rule: 'input: maxLength raised (widened)', ...one(action(), action({ input: obj({ title: str({ maxLength: 500 }), notes: str() }, ['title']) })), where: 'input.title', consumers: each('additive') },
  { rule: 'input: a pattern added', ...one(action(), action({ input: obj({ title: str({ maxLength: 200, pattern: '^[a-z]+$' }), notes: str() }, ['title']) })), where: 'input.title', consumers: ALL },
  { rule: 'input: an enum value removed', ...one(action({ input: obj({ kind: { enum: ['a', 'b'] } }) }), action({ input: obj({ kind: { enum: ['a'] } }) })), where: 'input.kind', consumers: ALL },
  { rule: 'input: an enum value added', ...one(action({ input: obj({ kind: { enum: ['a', 'b'] } }) }), action({ input: obj({ kind: { enum: ['a', 'b', 'c'] } }) })), where: 'input.kind', consumers: each('additive') },
  { rule: 'input: a type widened to accept null', ...one(action(), action({ input: obj({ title: { type: ['string', 'null'], maxLength: 200 }, notes: str() }, ['title']) })), where: 'input.title', consumers: each('additive') },
  { rule: 'input: integer where number was (narrowed)', ...one(action({ input: obj({ n: { type: 'number' } }) }), action({ input: obj({ n: { type: 'integer' } }) })), where: 'input.n', consumers: ALL },
  { rule: 'input: an optional field made required', ...one(action(), action({ input: obj({ title: str({ maxLength: 200 }), notes: str() }, ['title', 'notes']) })), where: 'input.notes', consumers: ALL },
  { rule: 'input: a required field made optional', ...one(action(), action({ input: obj({ title: str({ maxLength: 200 }), notes: str() }, []) })), where: 'input.title', consumers: each('additive') },
  { rule: 'input: a field removed', ...one(action(), action({ input: obj({ title: str({ maxLength: 200 }) }, ['title']) })), where: 'input.notes', consumers: ALL },
  { rule: 'input: extra fields refused (additionalProperties: false)', ...one(action(), action({ input: obj({ title: str({ maxLength: 200 }), notes: str() }, ['title'], { additionalProperties: false }) })), where: 'input.(other fields)', consumers: ALL },
  { rule: 'input: a schema where there was none', ...one(action({ input: null }), action({ input: obj({ a: str() }) })), where: 'input', consumers: ALL },
  // output: an output that promises less breaks readers
  { rule: 'output: a field removed', ...one(action(), action({ output: obj({ id: str(), state: { enum: ['open', 'done'] } }) })), where: 'output.title', consumers: ALL },
  { rule: 'output: a new field', ...one(action(), action({ output: obj({ id: str(), title: str(), state: { enum: ['open', 'done'] }, due: str() }) })), where: 'output.due', consumers: each('additive') },
  { rule: 'output: a field made optional', ...one(action(), action({ output: obj({ id: str(), title: str(), state: { enum: ['open', 'done'] } }, ['id', 'state']) })), where: 'output.title', consumers: ALL },
  { rule: 'output: a type widened (may be null)', ...one(action(), action({ output: obj({ id: str(), title: { type: ['string', 'null'] }, state: { enum: ['open', 'done'] } }) })), where: 'output.title', consumers: ALL },
  { rule: 'output: a type widened through anyOf', ...one(action(), action({ output: obj({ id: str(), title: { anyOf: [str(), { type: 'null' }] }, state: { enum: ['open', 'done'] } }) })), where: 'output.title', consumers: ALL },
  { rule: 'output: an enum value added (readers meet a new value)', ...one(action(), action({ output: obj({ id: str(), title: str(), state: { enum: ['open', 'done', 'archived'] } }) })), where: 'output.state', consumers: ALL },
  { rule: 'output: an enum value removed (promises more)', ...one(action(), action({ output: obj({ id: str(), title: str(), state: { enum: ['open'] } }) })), where: 'output.state', consumers: each('additive') },
  { rule: 'output: minLength raised (promises more)', ...one(action(), action({ output: obj({ id: str({ minLength: 1 }), title: str(), state: { enum: ['open', 'done'] } }) })), where: 'output.id', consumers: each('additive') },
  { rule: 'output: a description changed', ...one(action(), action({ output: obj({ id: str({ description: 'The id' }), title: str(), state: { enum: ['open', 'done'] } }) })), where: 'output.id', consumers: each('cosmetic') },
  // events: each event is read like an output
  { rule: 'events: a field removed', ...one(stream(), stream({ events: obj({ n: { type: 'integer' } }) })), where: 'events.at', consumers: ALL },
  { rule: 'events: a new field', ...one(stream(), stream({ events: obj({ n: { type: 'integer' }, at: str(), by: str() }, ['n', 'at']) })), where: 'events.by', consumers: each('additive') },
  { rule: 'events: a type changed', ...one(stream(), stream({ events: obj({ n: { type: 'string' }, at: str() }) })), where: 'events.n', consumers: ALL },
  { rule: 'stream: an action that now streams', ...one(action(), action({ stream: true })), where: 'stream', consumers: ALL },
  // declared errors
  { rule: 'errors: a declared error removed', ...one(action(), action({ errors: {} })), where: 'errors.NOT_FOUND', consumers: ALL },
  {
    rule: 'errors: a new declared error (additive; the client is told what it means)',
    ...one(action(), action({ errors: { NOT_FOUND: action().errors.NOT_FOUND, LOCKED: { status: 423, message: 'Locked', data: null } } })),
    where: 'errors.LOCKED',
    consumers: each('additive'),
    note: /error union gains LOCKED/,
  },
  { rule: 'errors: a status changed (REST only)', ...one(action(), action({ errors: { NOT_FOUND: { ...action().errors.NOT_FOUND, status: 410 } } })), where: 'errors.NOT_FOUND.status', consumers: { client: 'cosmetic', rest: 'breaking', agents: 'cosmetic' } },
  { rule: "errors: a field of the error's data removed", ...one(action(), action({ errors: { NOT_FOUND: { ...action().errors.NOT_FOUND, data: obj({}) } } })), where: 'errors.NOT_FOUND.data.id', consumers: ALL },
  // routes and surfaces
  { rule: 'route: the action route moved (REST only)', ...one(action(), action({ route: 'POST /api/services' })), where: 'route', consumers: { rest: 'breaking' } },
  { rule: 'endpoint: the base URL moved', before: contract([action()]), after: contract([action()], { endpoint: 'POST /v2/services' }), where: 'endpoint', consumers: { client: 'breaking', rest: 'breaking' } },
  { rule: 'mcp: the tool hidden from agents (visibility.mcp: false)', ...one(action(), action({ tool: null })), where: 'action', consumers: { agents: 'breaking' }, what: /no longer an MCP tool/ },
  { rule: 'mcp: a tool renamed', ...one(action(), action({ tool: 'tasks_create2' })), where: 'tool', consumers: { agents: 'breaking' } },
  { rule: 'visibility: hidden from REST', ...one(action(), action({ visible: false, route: null, tool: null })), where: 'action', consumers: ALL, what: /hidden from REST/ },
  // auth
  { rule: 'auth: now protected', ...one(action(), action({ auth: { protected: true, accessControl: [] } })), where: 'auth', consumers: ALL },
  { rule: 'auth: no longer protected', ...one(action({ auth: { protected: true, accessControl: [] } }), action()), where: 'auth', consumers: each('additive') },
  { rule: 'auth: roles narrowed', ...one(action({ auth: { protected: true, accessControl: ['admin', 'editor'] } }), action({ auth: { protected: true, accessControl: ['admin'] } })), where: 'auth.accessControl', consumers: ALL },
  { rule: 'auth: roles widened', ...one(action({ auth: { protected: true, accessControl: ['admin'] } }), action({ auth: { protected: true, accessControl: ['admin', 'editor'] } })), where: 'auth.accessControl', consumers: each('additive') },
  // removal, addition, deprecation
  { rule: 'removal: an action removed', before: contract([action(), stream()]), after: contract([stream()]), where: 'action', consumers: ALL, what: /^removed$/ },
  { rule: 'removal: after its sunset it is expected', before: contract([action({ deprecated: { since: '2020-01-01', sunset: PAST } }), stream()]), after: contract([stream()]), where: 'action', consumers: each('expected'), what: /after its sunset \(2020-06-01\)/ },
  { rule: 'removal: before its sunset it breaks', before: contract([action({ deprecated: { since: '2020-01-01', sunset: FUTURE } }), stream()]), after: contract([stream()]), where: 'action', consumers: ALL, what: /before its sunset \(2999-01-01\)/ },
  { rule: 'removal: deprecated without a sunset still breaks', before: contract([action({ deprecated: { since: '2020-01-01' } }), stream()]), after: contract([stream()]), where: 'action', consumers: ALL, what: /before any sunset date/ },
  { rule: 'removal: hidden after its sunset is expected', ...one(action({ deprecated: { since: '2020-01-01', sunset: PAST } }), action({ deprecated: { since: '2020-01-01', sunset: PAST }, visible: false, route: null, tool: null })), where: 'action', consumers: each('expected') },
  { rule: 'deprecation: an action deprecated', ...one(action(), action({ deprecated: { since: '2026-03-01', sunset: '2026-09-01' } })), where: 'deprecated', consumers: each('cosmetic'), what: /deprecated since 2026-03-01, sunset 2026-09-01/ },
  { rule: 'addition: a new action', before: contract([stream()]), after: contract([stream(), action()]), where: 'action', consumers: each('additive') },
  { rule: 'description: changed', ...one(action(), action({ description: 'Makes a task' })), where: 'description', consumers: each('cosmetic') },
]

t.test(`the rules, one row each (${rows.length})`, async (t) => {
  t.ok(rows.length >= 20)
  for (const row of rows) {
    const changes = diffContracts(row.before, row.after)
    t.equal(changes.length, 1, `${row.rule}: one change (${changes.map((c) => `${c.where}: ${c.what}`).join('; ')})`)
    const [change] = changes
    if (!change) continue
    t.equal(change.where, row.where, `${row.rule}: where`)
    t.same(change.consumers, row.consumers, `${row.rule}: classes`)
    t.strictSame(Object.keys(change.consumers).sort(), Object.keys(row.consumers).sort(), `${row.rule}: only the consumers that see it`)
    if (row.what) t.match(change.what, row.what, `${row.rule}: what`)
    if (row.note) t.match(change.note, row.note, `${row.rule}: note`)
  }
})

t.test('no change, no report; the same schema with its keys in another order is the same', async (t) => {
  t.same(diffContracts(contract([action()]), contract([action()])), [])
  const reordered = action({ input: { required: ['title'], properties: { notes: str(), title: { maxLength: 200, type: 'string' } }, type: 'object' } })
  t.same(diffContracts(contract([action()]), contract([reordered])), [])
})

t.test('classOf: the worst class over the consumers; an action seen by nobody yields nothing', async (t) => {
  t.equal(classOf({ subject: 'a', where: 'x', what: '', consumers: { client: 'cosmetic', rest: 'breaking' } }), 'breaking')
  t.equal(classOf({ subject: 'a', where: 'x', what: '', consumers: { client: 'additive', rest: 'expected' } }), 'additive')
  t.equal(classOf({ subject: 'a', where: 'x', what: '', consumers: {} }), 'cosmetic')
  const hidden = action({ visible: false, route: null, tool: null })
  t.same(diffContracts(contract([]), contract([hidden])), [], 'a new hidden action')
  t.same(diffContracts(contract([hidden]), contract([{ ...hidden, input: null }])), [], 'a hidden action changed')
})

t.test('direction: the same schema change, read and written', async (t) => {
  const narrowed = compareSchemas(str({ maxLength: 10 }), str({ maxLength: 5 }))
  t.same(narrowed.map((c) => c.effect), ['narrowed'])
  t.equal(classifyFor('input', 'narrowed'), 'breaking')
  t.equal(classifyFor('output', 'narrowed'), 'additive')
  t.equal(classifyFor('input', 'widened'), 'additive')
  t.equal(classifyFor('output', 'widened'), 'breaking')
  t.same(compareSchemas({ type: 'number' }, { type: 'string' }).map((c) => c.effect), ['changed'])
  t.equal(classifyFor('input', 'changed'), 'breaking')
  t.equal(classifyFor('output', 'changed'), 'breaking')
  t.same(compareSchemas(obj({ a: str() }), obj({ a: str(), b: str() }, ['a'])).map((c) => c.effect), ['property-added-optional'])
  t.same(compareSchemas({ type: 'array', items: str() }, { type: 'array', items: str({ format: 'uuid' }) }).map((c) => [c.path, c.effect]), [['[]', 'narrowed']])
  t.same(compareSchemas(str({ default: 'a' }), str({ default: 'b' })).map((c) => c.effect), ['default'])
  t.equal(classifyFor('input', 'default'), 'breaking', 'callers that leave it out get another value')
  t.equal(classifyFor('output', 'default'), 'cosmetic')
})
