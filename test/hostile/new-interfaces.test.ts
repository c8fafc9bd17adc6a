/**
 * Hostile input on this round's new interfaces (issue 30, item 5), each over a real socket or a real
 * process: SSE request headers (Accept, Last-Event-ID, parallel streams, early disconnects, bad
 * input), declared-error data (mismatched, extra, huge, deep, undeclared), and the CLI's arguments and
 * generated names. Every answer is an exact status and envelope (or one `fastify-actions: ...` line and
 * an exit code), never a 5xx for bad input, a stack, a path or SQL; nothing is lost or written elsewhere.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import t, { type Test } from 'tap'
import ts from 'typescript'
import Type from 'typebox'
import { createAction, createService, Err, Fail, messages, Ok } from '../../lib/index.js'
import { rawTarget } from '../helpers/raw-target.js'
import { buildServer } from '../helpers/server.js'
import { openStream, type OpenStream } from '../helpers/sse.js'
import { cliAsProcess, sharedCliRunner } from '../helpers/cli-runner.js'

// About 110 CLI command lines (a dozen as processes) and a dozen servers: slower than tap's 120 s on a loaded machine.
t.setTimeout(600_000)

const tick = (ms = 5) => new Promise((resolve) => setTimeout(resolve, ms))
const finallyRuns: string[] = []

const ticks = createAction({
  name: 'ticks',
  description: 'Yields n numbers',
  validation: Type.Object({ n: Type.Integer({ minimum: 0, maximum: 100 }) }, { additionalProperties: false }),
  output: Type.Object({ i: Type.Integer() }),
  handler: async function* (data) {
    for (let i = 0; i < data.n; i++) yield { i }
    return { n: data.n }
  },
})

const open = createAction({
  name: 'open',
  description: 'Ticks until closed; records its finally',
  validation: Type.Object({ tag: Type.Optional(Type.String({ maxLength: 40 })) }),
  handler: async function* (data, context) {
    try {
      for (let i = 0; !context.signal.aborted; i++) {
        yield i
        await tick(20)
      }
    } finally {
      finallyRuns.push(data.tag ?? 'open')
    }
  },
})

/** An async critical before hook: the stream starts only after a turn of the event loop. */
const slowGate = createAction({
  name: 'slowGate',
  description: 'async before hook',
  visibility: { rest: false },
  handler: async (data: Record<string, unknown>) => {
    await tick(10)
    return Ok(data)
  },
})

const gatedOpen = createAction({
  name: 'gatedOpen',
  description: 'Ticks until closed, behind an async before hook',
  hooks: { before: [{ service: 'hostile', action: 'slowGate', isCritical: true }] },
  handler: async function* (_data, context) {
    for (let i = 0; !context.signal.aborted; i++) {
      yield i
      await tick(20)
    }
  },
})

const plain = createAction({
  name: 'plain',
  description: 'A plain action',
  validation: Type.Object({ x: Type.String({ maxLength: 10 }) }),
  handler: (data) => Ok({ x: data.x }),
})

const deep = (levels: number): Record<string, unknown> => {
  let value: Record<string, unknown> = {}
  for (let i = 0; i < levels; i++) value = { a: value }
  return value
}

const declared = createAction({
  name: 'declared',
  description: 'Fails with declared errors, some of them bad',
  validation: Type.Object({ mode: Type.String({ maxLength: 20 }) }),
  errors: {
    NOT_FOUND: { status: 404, message: 'No such thing', data: Type.Object({ id: Type.String() }) },
    LIST: { status: 422, message: 'Bad items', data: Type.Object({ items: Type.Array(Type.String()) }) },
    TREE: { status: 409, message: 'Bad tree', data: Type.Object({ tree: Type.Unknown() }) },
  },
  handler: (data) => {
    switch (data.mode) {
      case 'mismatch':
        return Fail('NOT_FOUND', { id: 42, password: 'hunter2', sql: 'SELECT * FROM users' } as unknown as { id: string })
      case 'missing':
        return Fail('NOT_FOUND', {} as { id: string })
      case 'extra':
        return Fail('NOT_FOUND', { id: 'x', secret: 'hunter2', nested: { stack: 'at /work/x.ts:1' } } as { id: string })
      case 'huge':
        return Fail('LIST', { items: Array.from({ length: 20_000 }, (_, i) => `item-${i}`) })
      case 'deepExtra':
        return Fail('NOT_FOUND', { id: 'd', more: deep(100_000) } as { id: string })
      case 'deepTree':
        return Fail('TREE', { tree: deep(100_000) })
      case 'cycle': {
        const tree: Record<string, unknown> = { secret: 'hunter2' }
        tree.self = tree
        return Fail('TREE', { tree })
      }
      case 'undeclared':
        return Fail('NOPE /etc/passwd' as 'NOT_FOUND', { id: 'z' })
      case 'undeclaredProto':
        return Fail('__proto__' as 'NOT_FOUND', { id: 'z' })
      default:
        return Err('unknown mode')
    }
  },
})

const streamDeclared = createAction({
  name: 'streamDeclared',
  description: 'Streams one event, then fails with declared data that may be bad',
  validation: Type.Object({ mode: Type.String({ maxLength: 20 }) }),
  errors: { QUOTA: { status: 402, message: 'Quota reached', data: Type.Object({ left: Type.Integer() }) } },
  handler: async function* (data) {
    yield { i: 0 }
    if (data.mode === 'mismatch') return Fail('QUOTA', { left: 'lots', secret: 'hunter2' } as unknown as { left: number })
    if (data.mode === 'extra') return Fail('QUOTA', { left: 0, secret: 'hunter2' } as { left: number })
    return Fail('NOPE' as 'QUOTA', { left: 1 })
  },
})

const hostile = createService({ name: 'hostile', description: 'hostile input', actions: [ticks, open, gatedOpen, slowGate, plain, declared, streamDeclared] })

async function listen(t: Test, rest: Record<string, unknown> = {}) {
  const server = await buildServer({ services: [hostile], rest: { openapi: { enabled: true, reference: false }, ...rest } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  return { server, port: (server.app.server.address() as { port: number }).port }
}

const route = (action: string) => `/api/services/hostile/${action}`
const endpoint = (action: string, payload: unknown) => ({ intent: 'execute', service: 'hostile', action, payload })
/** The two ways to call one action: its own route (the body is the payload) and the endpoint. */
const both = (action: string, payload: unknown): Array<[string, unknown]> => [
  [route(action), payload],
  ['/api/services', endpoint(action, payload)],
]

/** Nothing an attacker should read in an answer: a stack, a file path, SQL, a secret of the handler. */
function clean(t: Test, text: string, label: string) {
  t.notMatch(text, /\bat [^\s]+ \(|\.ts:\d+|\/work\/|node_modules|SELECT |hunter2|\/etc\/passwd/, `${label}: nothing leaks`)
}

async function read(stream: OpenStream) {
  await stream.ended
  return { status: stream.status, type: stream.headers['content-type'], text: stream.text() }
}

const streamed = (n: number) => [...Array.from({ length: n }, (_, i) => JSON.stringify({ i })), JSON.stringify({ status: true, message: messages.executed('hostile', 'ticks'), data: { n } })]

t.test('SSE Accept: huge, comma-flooded, q=0, wildcards; a streaming action streams when the Accept header does not exclude text/event-stream', async (t) => {
  const { port } = await listen(t)
  const notAcceptable = JSON.stringify({ status: false, message: messages.streamNotAcceptable('hostile.ticks'), data: {} })
  const junk = 'application/x-junk;level=1, '.repeat(360).slice(0, 10 * 1024)
  const refused = [
    junk, 'text/event-stream;q=0', 'text/event-stream; q=0.0', 'text/event-stream;q=0, application/json', 'text/event-streamx', 'application/json',
    '*/*;q=0', 'text/*;q=0', 'text/*;q=0, */*', 'text/event-stream;q=0, */*', 'text/event-stream;q=0, text/*', 'text/event-stream;q=nonsense', '*/*;q=-1',
  ]
  const accepted = [
    `${junk}, text/event-stream`, `${','.repeat(8000)}text/event-stream`, 'TEXT/EVENT-STREAM', 'text/event-stream;q=0.5', 'application/json;q=0.9, text/event-stream',
    ' text/event-stream ; charset=utf-8', '*/*', 'text/*', 'text/plain, */*;q=0.1', 'application/json, */*', 'text/event-stream, */*;q=0', 'text/*;q=0.2, */*;q=0',
    // An Accept that lists no media range states no preference (RFC 9110 12.5.1), as no Accept does.
    '', ','.repeat(8000),
  ]
  for (const [path, body] of both('ticks', { n: 2 })) {
    for (const accept of refused) {
      const answer = await read(await openStream(port, path, body, { accept }))
      t.same(answer, { status: 406, type: 'application/json; charset=utf-8', text: notAcceptable }, `${path} Accept ${accept.slice(0, 40)} (${accept.length})`)
    }
    for (const accept of accepted) {
      const stream = await openStream(port, path, body, { accept })
      await stream.ended
      t.equal(stream.status, 200, `${path} Accept ${accept.slice(0, 40)} (${accept.length})`)
      t.same(stream.events.map((e) => e.data), streamed(2))
    }
  }
  // A plain action answers its JSON envelope whatever Accept says.
  const answerOfPlain = JSON.stringify({ status: true, message: messages.executed('hostile', 'plain'), data: { x: 'y' } })
  for (const [path, body] of both('plain', { x: 'y' })) {
    for (const accept of [...refused, ...accepted]) {
      const answer = await read(await openStream(port, path, body, { accept }))
      t.same(answer, { status: 200, type: 'application/json; charset=utf-8', text: answerOfPlain }, `plain ${path} Accept ${accept.slice(0, 40)}`)
    }
  }
})

t.test('SSE Accept past the header limit is a 431 from Node, and the server keeps serving', async (t) => {
  const { port } = await listen(t)
  const answer = await rawTarget(port, 'POST', route('ticks'), { 'content-type': 'application/json', accept: `${'x'.repeat(20 * 1024)}, text/event-stream` }, '{"n":1}')
  t.equal(answer.status, 431)
  clean(t, answer.body, '431')
  const stream = await openStream(port, route('ticks'), { n: 1 })
  await stream.ended
  t.same(stream.events.map((e) => e.data), streamed(1))
})

t.test('Last-Event-ID garbage: a streaming action that is not resumable answers 204 and does not run, a plain action answers as usual', async (t) => {
  const { port } = await listen(t)
  const garbage = [
    'x'.repeat(8 * 1024),
    '-1',
    '99999999999999999999999999999',
    'NaN',
    "1; DROP TABLE streams; --",
    Buffer.from('é✓名前🙂', 'utf8').toString('latin1'), // raw UTF-8 bytes on the wire
    'ÿþ\u00a0\u00ff',
    '../../etc/passwd',
    '%00%0d%0a',
  ]
  for (const lastEventId of garbage) {
    for (const [path, body] of both('ticks', { n: 2 })) {
      const answer = await read(await openStream(port, path, body, { accept: 'text/event-stream', 'last-event-id': lastEventId }))
      t.same(answer, { status: 204, type: undefined, text: '' }, `${path} Last-Event-ID ${lastEventId.slice(0, 30)}`)
    }
    for (const [path, body] of both('plain', { x: 'y' })) {
      const answer = await read(await openStream(port, path, body, { accept: 'text/event-stream', 'last-event-id': lastEventId }))
      t.equal(answer.status, 200, `plain ${path}`)
    }
  }
})

t.test('many parallel streams from one client: exactly maxPerClient open, the rest 429, slots freed on close', async (t) => {
  const { port } = await listen(t, { rateLimiting: { limitingHeader: 'x-client', limit: 1000 }, streams: { maxPerClient: 3 } })
  const as = { accept: 'text/event-stream', 'x-client': 'greedy' }
  const tooMany = JSON.stringify({ status: false, message: messages.tooManyStreams(3), data: { maxPerClient: 3 } })
  const attempts = await Promise.all(
    Array.from({ length: 24 }, (_, i) => {
      const [path, body] = both('open', { tag: `p${i}` })[i % 2]
      return openStream(port, path, body, as)
    }),
  )
  const opened = attempts.filter((s) => s.status === 200)
  const refused = attempts.filter((s) => s.status !== 200)
  t.equal(opened.length, 3, 'exactly maxPerClient streams open')
  for (const stream of refused) {
    const answer = await read(stream)
    t.same(answer, { status: 429, type: 'application/json; charset=utf-8', text: tooMany })
  }
  for (const stream of opened) await stream.until((events) => events.length >= 1)
  // Another client is not counted against this one.
  const other = await openStream(port, route('ticks'), { n: 1 }, { accept: 'text/event-stream', 'x-client': 'polite' })
  await other.ended
  t.equal(other.status, 200)
  for (const stream of opened) stream.destroy()
  // Once the server saw them close, the client gets its slots back.
  let again = await openStream(port, route('ticks'), { n: 1 }, as)
  while (again.status === 429) {
    await read(again)
    await tick()
    again = await openStream(port, route('ticks'), { n: 1 }, as)
  }
  await again.ended
  t.same(again.events.map((e) => e.data), streamed(1))
})

t.test('parallel streams behind an async before hook: the count holds while the hooks run', async (t) => {
  const { port } = await listen(t, { rateLimiting: { limitingHeader: 'x-client', limit: 1000 }, streams: { maxPerClient: 3 } })
  const as = { accept: 'text/event-stream', 'x-client': 'greedy' }
  const attempts = await Promise.all(Array.from({ length: 24 }, (_, i) => openStream(port, ...both('gatedOpen', {})[i % 2], as)))
  const opened = attempts.filter((s) => s.status === 200)
  t.equal(opened.length, 3, 'exactly maxPerClient streams open')
  t.same([...new Set(attempts.map((s) => s.status))].sort(), [200, 429])
  for (const stream of attempts) stream.destroy()
  // Requests refused after taking a slot (bad input, a client gone during the hook) give it back.
  const leaky = { accept: 'text/event-stream', 'x-client': 'leaky' }
  for (let i = 0; i < 10; i++) {
    const refused = await read(await openStream(port, route('ticks'), { n: -1 }, leaky))
    t.equal(refused.status, 400)
  }
  const gone = await Promise.all(Array.from({ length: 6 }, () => openStream(port, route('gatedOpen'), {}, leaky)))
  for (const stream of gone) stream.destroy()
  let held = 0
  for (;;) {
    const three = await Promise.all(Array.from({ length: 3 }, () => openStream(port, route('gatedOpen'), {}, leaky)))
    held = three.filter((s) => s.status === 200).length
    for (const stream of three) stream.destroy()
    if (held === 3) break
    await tick()
  }
  t.equal(held, 3, 'every slot back: three streams open again')
})

t.test('a client that disconnects right after the headers: the generator finally runs, the server keeps serving', async (t) => {
  const { port } = await listen(t)
  for (const path of [route('open'), '/api/services']) {
    const tag = `gone:${path}`
    const stream = await openStream(port, path, path === '/api/services' ? endpoint('open', { tag }) : { tag })
    t.equal(stream.status, 200, path)
    stream.destroy()
    while (!finallyRuns.includes(tag)) await tick()
    t.equal(finallyRuns.filter((run) => run === tag).length, 1, `${path}: the generator's finally ran once`)
  }
  // Many at once, each dropped as soon as its headers arrive.
  const many = await Promise.all(Array.from({ length: 20 }, (_, i) => openStream(port, route('open'), { tag: `m${i}` })))
  for (const stream of many) stream.destroy()
  const closed = () => finallyRuns.filter((run) => /^m\d+$/.test(run))
  while (closed().length < 20) await tick()
  t.equal(new Set(closed()).size, 20, 'every generator closed, once')
  const next = await openStream(port, route('ticks'), { n: 3 })
  await next.ended
  t.same(next.events.map((e) => e.data), streamed(3), 'the next stream is whole')
})

t.test('bad input to a streaming action is a JSON 400 envelope, never a stream', async (t) => {
  const { port } = await listen(t)
  const sse = { 'content-type': 'application/json', accept: 'text/event-stream' }
  const validation = (answer: { status: number; headers: Record<string, string>; body: string }, label: string) => {
    t.equal(answer.status, 400, label)
    t.equal(answer.headers['content-type'], 'application/json; charset=utf-8', label)
    clean(t, answer.body, label)
    return JSON.parse(answer.body) as { status: boolean; message: string; data: Record<string, unknown> }
  }
  for (const [payload, path] of [
    [{ n: -1 }, '/n'],
    [{ n: 'many' }, '/n'],
    [{ n: 1e308 }, '/n'],
    [{ n: 1, extra: 'x' }, ''],
    [{}, ''],
  ] as const) {
    for (const [target, body] of both('ticks', payload)) {
      const parsed = validation(await rawTarget(port, 'POST', target, sse, JSON.stringify(body)), `${target} ${JSON.stringify(payload)}`)
      t.equal(parsed.status, false)
      t.equal(parsed.message, messages.validationFailed)
      t.match(parsed.data, { errors: [{ path }] })
    }
  }
  for (const text of ['{"n":', 'not json', '{"n":1}{"n":2}', '\u0000']) {
    for (const target of [route('ticks'), '/api/services']) {
      const answer = await rawTarget(port, 'POST', target, sse, text)
      const parsed = validation(answer, `${target} ${JSON.stringify(text)}`)
      t.equal(parsed.status, false)
      t.equal(typeof parsed.message, 'string')
    }
  }
  for (const text of ['[]', 'null', '"n"', '7']) {
    const parsed = validation(await rawTarget(port, 'POST', route('ticks'), sse, text), `route body ${text}`)
    t.equal(parsed.status, false)
  }
  const deepBody = `{"n":${'['.repeat(5000)}${']'.repeat(5000)}}`
  for (const target of [route('ticks'), '/api/services']) {
    const answer = await rawTarget(port, 'POST', target, sse, target === '/api/services' ? JSON.stringify(endpoint('ticks', {})).replace('{}', deepBody) : deepBody)
    t.equal(answer.status, 400, `${target} deep body`)
    t.notMatch(answer.headers['content-type'], /event-stream/)
    clean(t, answer.body, 'deep body')
  }
  const stream = await openStream(port, route('ticks'), { n: 1 })
  await stream.ended
  t.same(stream.events.map((e) => e.data), streamed(1), 'still serving')
})

t.test('declared-error data: mismatched 500 generic, extra dropped, huge written, deep and cyclic never leak, undeclared a plain Err', async (t) => {
  const { port } = await listen(t)
  const internal = JSON.stringify({ status: false, message: messages.internal, data: {} })
  const expected: Record<string, { status: number; text: string }> = {
    // Data that does not match its schema (42 where a string is declared) is the logged 500, as
    // docs/errors.md says: never coerced to "42", and the properties outside it (a password, SQL) never leave.
    mismatch: { status: 500, text: internal },
    missing: { status: 500, text: internal },
    extra: { status: 404, text: '{"status":false,"message":"No such thing","data":{"code":"NOT_FOUND","id":"x"}}' },
    deepExtra: { status: 404, text: '{"status":false,"message":"No such thing","data":{"code":"NOT_FOUND","id":"d"}}' },
    deepTree: { status: 500, text: internal },
    cycle: { status: 500, text: internal },
    undeclared: { status: 400, text: JSON.stringify({ status: false, message: 'NOPE /etc/passwd', data: {} }) },
    undeclaredProto: { status: 400, text: JSON.stringify({ status: false, message: '__proto__', data: {} }) },
  }
  for (const [mode, want] of Object.entries(expected)) {
    for (const [path, body] of both('declared', { mode })) {
      const response = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      const text = await response.text()
      // A 100,000-deep tree is the handler's own declared data: on Node 20 writing it overflows the
      // stack (the generic 500, nothing sent); Node 24 and 26 write it whole. Either is a clear answer.
      if (mode === 'deepTree' && response.status === 409) {
        t.equal((JSON.parse(text) as { data: { code: string } }).data.code, 'TREE', `${mode} via ${path}: written whole`)
        continue
      }
      t.same({ status: response.status, text }, want, `${mode} via ${path}`)
    }
  }
  for (const [path, body] of both('declared', { mode: 'huge' })) {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    t.equal(response.status, 422)
    const parsed = (await response.json()) as { data: { code: string; items: string[] } }
    t.equal(parsed.data.code, 'LIST')
    t.equal(parsed.data.items.length, 20_000, 'huge declared data arrives whole')
    t.equal(parsed.data.items[19_999], 'item-19999')
  }
})

t.test('declared-error data on a stream: the error event carries the same envelope; bad data the generic 500', async (t) => {
  const { port } = await listen(t)
  const cases: Record<string, string> = {
    mismatch: JSON.stringify({ status: false, message: messages.internal, data: {} }),
    extra: '{"status":false,"message":"Quota reached","data":{"code":"QUOTA","left":0}}',
    undeclared: JSON.stringify({ status: false, message: 'NOPE', data: {} }),
  }
  for (const [mode, error] of Object.entries(cases)) {
    for (const [path, body] of both('streamDeclared', { mode })) {
      const stream = await openStream(port, path, body)
      await stream.ended
      t.equal(stream.status, 200)
      t.same(stream.events.map((e) => [e.event, e.data]), [['message', '{"i":0}'], ['error', error]], `${mode} via ${path}`)
      clean(t, stream.text(), mode)
    }
  }
})

// ---------------------------------------------------------------------------------------------
// The CLI, run from source as a real process.


// The ~110 command lines below run in one runner process (test/helpers/cli-runner.ts: what bin.ts
// does with each); every test also runs some of them as processes of their own and expects the same.
const cli = sharedCliRunner(t)
const cliReal = cliAsProcess

async function cliAll(list: string[][], cwd: string) {
  return Promise.all(list.map((args) => cli(args, cwd)))
}

/** Every file under `dir` with its size and mtime: compared before and after to show nothing changed. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = join(folder, entry.name)
      if (entry.isDirectory()) walk(full)
      out[relative(dir, full)] = entry.isDirectory() ? 'dir' : `${statSync(full).size}:${readFileSync(full, 'utf8')}`
    }
  }
  walk(dir)
  return out
}

const fixture = () => ({
  outside: {},
  project: {
    'package.json': JSON.stringify({ name: 'fixture', dependencies: { 'fastify-actions': '*' } }),
    src: { services: { 'index.ts': "import { createServices } from 'fastify-actions'\n\nexport const services = createServices([])\n", tasks: { 'index.ts': "import { createService } from 'fastify-actions'\nimport helloAction from './hello.js'\n\nexport const tasksService = createService({\n  name: 'tasks',\n  description: 'x',\n  actions: [helloAction],\n})\n", 'hello.ts': '' } } },
    test: { 'helpers.ts': '' },
  },
})

const oneLine = (t: Test, stderr: string, label: string) => {
  t.match(stderr, /^fastify-actions: [^\n]+\n$/, `${label}: one line`)
  t.notMatch(stderr, /\bat [^\s]+ \(|\.ts:\d+|\/work\//, `${label}: no stack`)
}

t.test('CLI: hostile service and action names are refused in one line, exit 1, nothing written anywhere', async (t) => {
  const dir = t.testdir(fixture())
  const project = join(dir, 'project')
  const before = snapshot(dir)
  const bad = [
    '../x',
    '../../outside/pwned',
    'a/b',
    'a\\b',
    '/tmp/abs',
    '..',
    '.',
    '%2e%2e',
    '%2e%2e%2fx',
    '__proto__',
    'constructor.prototype',
    'x'.repeat(61),
    'x'.repeat(5000),
    'é',
    'café',
    '名前',
    'a\u202eb',
    'ａｂｃ',
    '',
    ' ',
    'a b',
    'a\nb',
    'a\rb',
    '\u001b[31mred',
    'x;rm -rf',
    '$(id)',
    'a"b',
    "a'b",
    'a`b',
    '--help',
    '-h',
    '--',
    'node_modules',
  ]
  // Every name as a service name; the ones that reach paths or the terminal also as an action name and as gen action's service (each is a process).
  const everywhere = new Set(['../x', '../../outside/pwned', 'a/b', '%2e%2e', '__proto__', '', 'a\nb', '\u001b[31mred', '--help'])
  const lines = bad.flatMap((name) => [['gen', 'service', '--', name], ...(everywhere.has(name) ? [['gen', 'action', 'tasks', '--', name], ['gen', 'action', '--', name, 'x']] : [])].map((args) => ({ name, args })))
  const results = await cliAll(lines.map(({ args }) => args), project)
  for (const [i, { name, args }] of lines.entries()) {
    const result = results[i]
    const kind = args[1] === 'action' && args[2] === 'tasks' ? 'action' : 'service'
    t.equal(result.code, 1, JSON.stringify(args))
    t.equal(result.stderr, `fastify-actions: invalid ${kind} name ${JSON.stringify(name)}: use letters, digits and single hyphens, starting with a letter (e.g. user-profiles)\n`, JSON.stringify(args))
    oneLine(t, result.stderr, JSON.stringify(args))
    t.equal(result.stdout, '')
  }
  for (const i of [0, 1, 10, lines.length - 1]) t.same(await cliReal(lines[i]!.args, project), results[i], `as a process of its own: ${JSON.stringify(lines[i]!.args)}`)
  t.same(snapshot(dir), before, 'nothing written, inside the project or beside it')
})

t.test('CLI: flags as names and unknown flags are usage errors (exit 2) or help; nothing written', async (t) => {
  const dir = t.testdir(fixture())
  const project = join(dir, 'project')
  const before = snapshot(dir)
  const usage: Array<[string[], string]> = [
    [['gen', 'service', 'x', '--force'], "fastify-actions: Unknown option '--force' (see --help)\n"],
    [['gen', 'service', '-x'], "fastify-actions: Unknown option '-x' (see --help)\n"],
    [['gen', 'service', '--name=../x'], "fastify-actions: Unknown option '--name' (see --help)\n"],
    [['gen', '--', 'service'], 'fastify-actions: gen service needs one name: fastify-actions gen service <name> (see --help)\n'],
    [['gen', 'service', 'a', 'b'], 'fastify-actions: gen service needs one name: fastify-actions gen service <name> (see --help)\n'],
    [['gen', '../service', 'x'], 'fastify-actions: cannot generate "../service": use service or action (see --help)\n'],
    [['gen', '__proto__', 'x'], 'fastify-actions: cannot generate "__proto__": use service or action (see --help)\n'],
    [['__proto__'], 'fastify-actions: unknown command "__proto__" (see --help)\n'],
    [['constructor'], 'fastify-actions: unknown command "constructor" (see --help)\n'],
    [['toString'], 'fastify-actions: unknown command "toString" (see --help)\n'],
    [['--bogus'], 'fastify-actions: unknown command "--bogus" (see --help)\n'],
    [['a\nb'], 'fastify-actions: unknown command "a\\nb" (see --help)\n'],
    [['list', '--config'], "fastify-actions: Option '--config <value>' argument missing (see --help)\n"],
    [['new', '--from'], "fastify-actions: Option '--from <value>' argument missing (see --help)\n"],
    [['new', ''], 'fastify-actions: new needs a directory: fastify-actions new <dir> (see --help)\n'],
    [['new', 'a', 'b'], 'fastify-actions: unexpected argument "b" (see --help)\n'],
  ]
  for (const [args, stderr] of usage) {
    const result = await cli(args, project)
    t.equal(result.code, 2, JSON.stringify(args))
    t.equal(result.stderr, stderr, JSON.stringify(args))
    oneLine(t, result.stderr, JSON.stringify(args))
  }
  const failures: Array<[string[], string]> = [
    [['list', '--config', '../outside/nope.ts'], 'fastify-actions: config file not found: ../outside/nope.ts\n'],
    [['openapi', '--config', '%2e%2e/x', '--out', '../outside/doc.json'], 'fastify-actions: config file not found: %2e%2e/x\n'],
    [['mcp', '--config', '../../../../../../etc/hostname.ts'], 'fastify-actions: config file not found: ../../../../../../etc/hostname.ts\n'],
  ]
  for (const [args, stderr] of failures) {
    const result = await cli(args, project)
    t.equal(result.code, 1, JSON.stringify(args))
    t.equal(result.stderr, stderr, JSON.stringify(args))
    t.equal(result.stdout, '', `${JSON.stringify(args)}: nothing on stdout`)
  }
  for (const args of [['gen', 'service', '--help'], ['gen', 'service', 'x', '-h'], ['new', '../x', '--help']]) {
    const result = await cli(args, project)
    t.equal(result.code, 0, JSON.stringify(args))
    t.match(result.stdout, /^Usage: fastify-actions (gen|new)/, `${JSON.stringify(args)}: the help, nothing generated`)
  }
  for (const args of [usage[0]![0], usage[7]![0], failures[0]![0], ['gen', 'service', '--help']]) t.same(await cliReal(args, project), await cli(args, project), `as a process of its own: ${JSON.stringify(args)}`)
  t.same(snapshot(dir), before, 'nothing written')
})

t.test('CLI: new refuses hostile directory names and specs in one line; nothing written outside', async (t) => {
  const dir = t.testdir({ work: { 'keep.txt': 'x' }, outside: {} })
  const work = join(dir, 'work')
  const before = snapshot(dir)
  const refused: Array<[string[], string]> = [
    [['new', '--no-install', '--', '--help'], 'fastify-actions: invalid project name "--help": the folder name becomes the package name (lowercase letters, digits, ".", "_", "-")\n'],
    [['new', '../Outside-App', '--no-install'], 'fastify-actions: invalid project name "Outside-App": the folder name becomes the package name (lowercase letters, digits, ".", "_", "-")\n'],
    [['new', '名前', '--no-install'], 'fastify-actions: invalid project name "名前": the folder name becomes the package name (lowercase letters, digits, ".", "_", "-")\n'],
    [['new', 'a\nb', '--no-install'], 'fastify-actions: invalid project name "a\\nb": the folder name becomes the package name (lowercase letters, digits, ".", "_", "-")\n'],
    [['new', 'x'.repeat(215), '--no-install'], `fastify-actions: invalid project name "${'x'.repeat(215)}": the folder name becomes the package name (lowercase letters, digits, ".", "_", "-")\n`],
    // Issue 40: names npm refuses (validate-npm-package-name) were accepted.
    [['new', 'node_modules', '--no-install'], 'fastify-actions: invalid project name "node_modules": npm refuses it (node_modules is not a valid package name)\n'],
    [['new', 'favicon.ico', '--no-install'], 'fastify-actions: invalid project name "favicon.ico": npm refuses it (favicon.ico is not a valid package name)\n'],
    [['new', 'http', '--no-install'], 'fastify-actions: invalid project name "http": npm refuses it (http is a core module name)\n'],
    [['new', '.', '--no-install'], 'fastify-actions: . already exists and is not empty\n'],
    [['new', '..', '--no-install'], 'fastify-actions: .. already exists and is not empty\n'],
    [['new', 'app', '--no-install', '--from', ''], 'fastify-actions: --from needs an npm spec: a version range, a tarball or a folder\n'],
    [['new', 'app', '--no-install', '--from', '../../nowhere'], 'fastify-actions: --from ../../nowhere: no such file or folder\n'],
  ]
  for (const [args] of [refused[0]!, refused[6]!]) t.same(await cliReal(args, work), await cli(args, work), `as a process of its own: ${JSON.stringify(args)}`)
  for (const [args, stderr] of refused) {
    const result = await cli(args, work)
    t.equal(result.code, 1, JSON.stringify(args))
    t.equal(result.stderr, stderr, JSON.stringify(args))
    oneLine(t, result.stderr, JSON.stringify(args))
  }
  t.same(snapshot(dir), before, 'nothing written')

  // A spec with quotes and newlines cannot break out of package.json.
  const spec = 'x", "scripts": {"postinstall": "curl evil"}, "y": "\n'
  const result = await cli(['new', 'app', '--no-install', '--from', spec], work)
  t.equal(result.code, 0, result.stderr)
  const manifest = JSON.parse(readFileSync(join(work, 'app', 'package.json'), 'utf8')) as { dependencies: Record<string, string>; scripts: Record<string, string> }
  t.equal(manifest.dependencies['fastify-actions'], spec, 'the spec is one JSON string')
  t.notOk(Object.values(manifest.scripts ?? {}).some((s) => s.includes('curl')), 'no script injected')
  t.same(readdirSync(join(dir, 'outside')), [], 'nothing beside the project')
  // Issue 40: the project ignored `.env` but not `.env.production`, keys or certificates.
  const ignored = readFileSync(join(work, 'app', '.gitignore'), 'utf8').split('\n')
  for (const line of ['.env', '.env.*', '!.env.example', '*.pem', '*.key']) t.ok(ignored.includes(line), `.gitignore has ${line}`)
  const dockerIgnored = readFileSync(join(work, 'app', '.dockerignore'), 'utf8').split('\n')
  for (const line of ['.env', '.env.*', '*.pem', '*.key']) t.ok(dockerIgnored.includes(line), `.dockerignore has ${line}`)
})

t.test('CLI: reserved words are valid names and generate code that parses', async (t) => {
  const dir = t.testdir(fixture())
  const project = join(dir, 'project')
  const parses = (file: string) => {
    const text = readFileSync(join(project, file), 'utf8')
    const output = ts.transpileModule(text, { reportDiagnostics: true, compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } })
    t.same(output.diagnostics?.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')) ?? [], [], `${file} parses`)
  }
  for (const name of ['class', 'constructor', 'prototype', 'delete', 'new', 'await', 'hasOwnProperty', 'valueOf', 'toString']) {
    // The first name as processes of their own, the others in the runner.
    const run = name === 'class' ? cliReal : cli
    const service = await run(['gen', 'service', name], project)
    t.equal(service.code, 0, `gen service ${name}: ${service.stderr}`)
    parses(join('src', 'services', name, 'index.ts'))
    parses(join('src', 'services', name, 'hello.ts'))
    parses(join('test', `${name}.test.ts`))
    const action = await run(['gen', 'action', 'tasks', name], project)
    t.equal(action.code, 0, `gen action tasks ${name}: ${action.stderr}`)
    parses(join('src', 'services', 'tasks', `${name}.ts`))
    parses(join('test', `tasks.${name}.test.ts`))
  }
  parses(join('src', 'services', 'index.ts'))
  parses(join('src', 'services', 'tasks', 'index.ts'))
  t.same(readdirSync(join(dir, 'outside')), [], 'nothing beside the project')
  t.ok(existsSync(join(project, 'src', 'services', 'class', 'index.ts')))
})
