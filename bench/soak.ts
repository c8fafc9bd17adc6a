/**
 * The soak test (`npm run soak`): a server started in-process in a child process, and mixed load from
 * this process over loopback (a bounded loop of keep-alive node:http clients): every intent, Err/throw/validation failures, bad bodies,
 * 404/415, JWT-protected actions for many users (and bad tokens), multipart uploads (accepted and
 * refused), all behind the in-memory rate limiter, every other request with one of 10,000 distinct keys. The child reports its RSS, heap and open handles
 * over IPC after a warm-up and after every slice; the script fails (exit code 1) when RSS grew 10 % or
 * more after the warm-up, when open handles grew, or when any answer differs from the first answer of
 * its kind (status and body, byte for byte).
 *
 * The server runs with a fixed 1 MB young generation (`--min-semi-space-size=1 --max-semi-space-size=1`):
 * with V8's default, the young generation grows and shrinks between 1 and 16 MB per semi-space, which
 * moves RSS by ±30 MB at random on a heap of ~20 MB live and would hide or fake a trend. Each sample
 * is taken after the load generator's connections are gone and three forced collections (`--expose-gc`).
 *
 * Settings (environment): SOAK_REQUESTS (200000 after the warm-up), SOAK_WARMUP (20000),
 * SOAK_CONNECTIONS (32), SOAK_SLICES (4), SOAK_MAX_GROWTH (0.10).
 */
import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { Agent, request as httpRequest } from 'node:http'
import { fileURLToPath } from 'node:url'
import Type from 'typebox'
import { createAction, createServer, Err, Ok, type Service } from '../lib/index.js'

const settings = {
  requests: Number(process.env.SOAK_REQUESTS ?? 200_000),
  warmup: Number(process.env.SOAK_WARMUP ?? 20_000),
  connections: Number(process.env.SOAK_CONNECTIONS ?? 32),
  slices: Number(process.env.SOAK_SLICES ?? 4),
  maxGrowth: Number(process.env.SOAK_MAX_GROWTH ?? 0.1),
}
const USERS = 50
/** Distinct rate-limit keys in the mix (issue 17: the limiter must hold them all). */
const ROTATING_KEYS = 10_000
const SECRET = 'soak-secret-that-is-long-enough-for-hs256'
const DISCOVERY_SECRET = 'soak-discovery'
/** The whole run stops by itself after this, whatever happens. */
const HARD_LIMIT_MS = 15 * 60_000

interface Sample {
  label: string
  requests: number
  rss: number
  heapUsed: number
  external: number
  handles: Record<string, number>
  connections: number
}

type ToChild = { type: 'sample'; label: string; requests: number } | { type: 'exit' }
type FromChild = { type: 'ready'; port: number; tokens: string[] } | ({ type: 'sample' } & Sample)

// ------------------------------------------------------------------------------------------------
// The server (child process)
// ------------------------------------------------------------------------------------------------

function soakServices(): Service[] {
  const echo = createAction({
    name: 'echo',
    description: 'Validated echo',
    validation: Type.Object({ title: Type.String({ minLength: 1, maxLength: 100 }), count: Type.Integer({ minimum: 0 }) }),
    handler: (data) => Ok({ title: data.title, count: data.count }),
  })
  const stamp = createAction({
    name: 'stamp',
    description: 'Before hook: writes hook state',
    visibility: { rest: false },
    handler: async (data: Record<string, unknown>, context) => {
      await new Promise((resolve) => setImmediate(resolve))
      context.updateHookState('stamped', true)
      context.setSession('rest', { seen: data.n })
      return Ok({ ...data, stamped: true })
    },
  })
  const hooked = createAction({
    name: 'hooked',
    description: 'Runs a before hook and an after hook',
    hooks: {
      before: [{ service: 'soak', action: 'stamp', isCritical: true }],
      after: [{ service: 'soak', action: 'finish', isCritical: false }],
    },
    handler: async (data: Record<string, unknown>, context) => Ok({ input: data, state: context.hookContext.state, session: context.getSession('rest') }),
  })
  const finish = createAction({
    name: 'finish',
    description: 'After hook',
    visibility: { rest: false },
    handler: (data: Record<string, unknown>) => Ok({ ...data, finished: true }),
  })
  const fails = createAction({ name: 'fails', description: 'Err', handler: () => Err('it failed') })
  const throws = createAction({
    name: 'throws',
    description: 'Throws',
    handler: () => {
      throw new Error('handler exploded')
    },
  })
  const whoami = createAction({
    name: 'whoami',
    description: 'JWT-protected',
    isProtected: true,
    handler: async (_data, context) => {
      await new Promise((resolve) => setImmediate(resolve))
      const user = context.getUser()
      return Ok({ userId: user?.userId, organizationId: user?.organizationId })
    },
  })
  const upload = createAction({
    name: 'upload',
    description: 'Multipart upload',
    isSpecial: { contentType: 'multipart/form-data' },
    handler: async (data: Record<string, unknown>) => {
      const files = (data.files ?? {}) as Record<string, File | File[]>
      const list = Object.values(files).flat()
      return Ok({ fields: data.fields, files: await Promise.all(list.map(async (file) => ({ name: file.name, size: (await file.arrayBuffer()).byteLength }))) })
    },
  })
  return [
    { name: 'soak', description: 'Soak actions', actions: [echo, stamp, hooked, finish, fails, throws, whoami, upload] },
    { name: 'other', description: 'A second service for explore', actions: [createAction({ name: 'noop', description: 'Nothing', handler: () => Ok({}) })] },
  ]
}

async function runServer(): Promise<void> {
  const server = await createServer({
    serverName: 'soak',
    logServices: false,
    forceNewInstance: true,
    services: soakServices(),
    auth: { secret: SECRET },
    actionTimeout: 10_000,
    rest: {
      baseUrl: '/api',
      allowedOrigins: ['http://localhost:3000'],
      enableStatus: true,
      discovery: { enabled: true, secret: DISCOVERY_SECRET },
      rateLimiting: { limitingHeader: 'x-client', limit: 1_000_000_000, windowMs: 900_000 },
    },
  })
  const app = server.rest!.app
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as { port: number }).port
  const tokens = Array.from({ length: USERS }, (_, i) => app.jwt.sign({ sub: `user-${i}`, orgId: `org-${i % 5}` }))
  const gc = (globalThis as { gc?: () => void }).gc
  if (!gc) throw new Error('run the server with --expose-gc')

  const connections = () => new Promise<number>((resolve) => app.server.getConnections((_error, count) => resolve(count)))
  const settle = () => new Promise((resolve) => setTimeout(resolve, 50))

  process.on('message', async (message: ToChild) => {
    if (message.type === 'exit') {
      await server.close()
      process.disconnect()
      return
    }
    // Wait (bounded) for the load generator's sockets to be gone, then collect twice before measuring.
    for (let i = 0; i < 100 && (await connections()) > 0; i++) await settle()
    for (let i = 0; i < 3; i++) {
      gc()
      await settle()
    }
    const handles: Record<string, number> = {}
    for (const name of process.getActiveResourcesInfo()) handles[name] = (handles[name] ?? 0) + 1
    const { rss, heapUsed, external } = process.memoryUsage()
    const reply: FromChild = { type: 'sample', label: message.label, requests: message.requests, rss, heapUsed, external, handles, connections: await connections() }
    process.send!(reply)
  })
  process.send!({ type: 'ready', port, tokens } satisfies FromChild)
}

// ------------------------------------------------------------------------------------------------
// The load generator (this process)
// ------------------------------------------------------------------------------------------------

interface SoakRequest {
  kind: string
  method: 'GET' | 'POST'
  path: string
  headers: Record<string, string>
  body?: string | Buffer
  /** The status this kind must answer with. */
  status: number
}

const json = (client: string, extra: Record<string, string> = {}) => ({ 'content-type': 'application/json', 'x-client': client, ...extra })
const call = (intent: string, service: string, action: string, payload: unknown = {}) => JSON.stringify({ intent, service, action, payload })

async function multipart(files: Array<{ name: string; type: string; bytes: Uint8Array }>): Promise<{ body: Buffer; contentType: string }> {
  const form = new FormData()
  form.append('intent', 'execute')
  form.append('service', 'soak')
  form.append('action', 'upload')
  form.append('note', 'soak')
  for (const file of files) form.append('file', new File([file.bytes as Uint8Array<ArrayBuffer>], file.name, { type: file.type }))
  const request = new Request('http://localhost/', { method: 'POST', body: form })
  return { body: Buffer.from(await request.arrayBuffer()), contentType: request.headers.get('content-type')! }
}

async function soakRequests(tokens: string[]): Promise<SoakRequest[]> {
  const png = new Uint8Array(2048).fill(7)
  png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  const accepted = await multipart([{ name: 'a.png', type: 'image/png', bytes: png }, { name: 'b.pdf', type: 'application/pdf', bytes: new TextEncoder().encode('%PDF-1.4 soak') }])
  const refused = await multipart([{ name: 'run.sh', type: 'text/x-shellscript', bytes: new TextEncoder().encode('#!/bin/sh\necho hi\n') }])
  const post = (kind: string, status: number, body: string | Buffer, headers = json(kind)): SoakRequest => ({ kind, method: 'POST', path: '/api/services', headers, body, status })
  const fixed: SoakRequest[] = [
    post('execute ok', 200, call('execute', 'soak', 'echo', { title: 'soak', count: 1 })),
    post('execute validation failure', 400, call('execute', 'soak', 'echo', { title: '', count: -1 })),
    post('execute Err', 400, call('execute', 'soak', 'fails')),
    post('execute throws', 400, call('execute', 'soak', 'throws')),
    post('execute with hooks', 200, call('execute', 'soak', 'hooked', { n: 1 })),
    post('execute unknown action', 400, call('execute', 'soak', 'nope')),
    post('execute wildcard', 400, call('execute', '*', '*')),
    post('explore all', 200, call('explore', '*', '*', { discoverySecret: DISCOVERY_SECRET })),
    post('explore service', 200, call('explore', 'soak', '*', { discoverySecret: DISCOVERY_SECRET })),
    post('explore action', 200, call('explore', 'soak', 'echo', { discoverySecret: DISCOVERY_SECRET })),
    post('schema all', 200, call('schema', '*', '*', { discoverySecret: DISCOVERY_SECRET })),
    post('explore wrong secret', 403, call('explore', '*', '*', { discoverySecret: 'wrong' })),
    post('invalid JSON', 400, '{"intent":'),
    post('envelope schema failure', 400, JSON.stringify({ intent: 'nope' })),
    post('text/plain', 415, call('execute', 'soak', 'echo', { title: 'x', count: 1 }), { 'content-type': 'text/plain', 'x-client': 'text' }),
    post('protected without token', 401, call('execute', 'soak', 'whoami')),
    post('protected bad token', 401, call('execute', 'soak', 'whoami'), json('bad-token', { authorization: `Bearer ${tokens[0]}x` })),
    post('upload accepted', 200, accepted.body, { 'content-type': accepted.contentType, 'x-client': 'upload' }),
    post('upload refused type', 400, refused.body, { 'content-type': refused.contentType, 'x-client': 'upload' }),
    { kind: 'status', method: 'GET', path: '/status', headers: { 'x-client': 'status' }, status: 200 },
    { kind: 'not found', method: 'GET', path: '/nowhere', headers: { 'x-client': 'nowhere' }, status: 404 },
  ]
  const users = tokens.map((token, i) =>
    post(`protected user-${i}`, 200, call('execute', 'soak', 'whoami'), json(`user-${i}`, { authorization: `Bearer ${token}` })),
  )
  // Users spread between the other kinds, so neighbouring requests differ.
  const mixed: SoakRequest[] = []
  for (let i = 0; i < Math.max(fixed.length, users.length); i++) {
    if (i < fixed.length) mixed.push(fixed[i])
    if (i < users.length) mixed.push(users[i])
  }
  // ROTATING_KEYS distinct rate-limit keys, one every other request: the in-memory store holds them
  // all (its cache is 100,000 keys), so its memory must be flat once the warm-up has seen them.
  const withKeys: SoakRequest[] = []
  for (let i = 0; i < ROTATING_KEYS; i++) {
    withKeys.push(mixed[i % mixed.length])
    withKeys.push(post('execute ok, rotating key', 200, call('execute', 'soak', 'echo', { title: 'soak', count: 1 }), json(`rotating-${i}`)))
  }
  return withKeys
}

interface Golden {
  status: number
  body: string
}

interface Wrong {
  count: number
  first: Golden
}

interface LoadResult {
  answered: number
  errors: number
  seconds: number
}

/** One request over the keep-alive agent; resolves with the status and the whole body. */
function send(agent: Agent, port: number, request: SoakRequest): Promise<Golden> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...request.headers }
    if (request.body !== undefined) headers['content-length'] = Buffer.byteLength(request.body)
    const req = httpRequest({ agent, host: '127.0.0.1', port, method: request.method, path: request.path, headers, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')))
    req.on('error', reject)
    req.end(request.body)
  })
}

/**
 * `amount` requests from `settings.connections` concurrent clients, cycling through the kinds; every
 * answer is compared with the golden answer of its kind. (A bounded loop over node:http rather than
 * autocannon: autocannon mis-attributes answers after the server closes a connection, which Fastify
 * does after a body it could not parse.)
 */
async function load(port: number, requests: SoakRequest[], golden: Map<string, Golden>, amount: number, wrong: Map<string, Wrong>): Promise<LoadResult> {
  // A fresh agent per run, destroyed after it: the server's connections are gone when it is sampled.
  const agent = new Agent({ keepAlive: true, maxSockets: settings.connections })
  let next = 0
  let answered = 0
  let errors = 0
  const started = performance.now()
  const client = async () => {
    while (next < amount) {
      const request = requests[next++ % requests.length]
      let got: Golden
      try {
        got = await send(agent, port, request)
      } catch {
        errors++
        continue
      }
      answered++
      const expected = golden.get(request.kind)!
      if (got.status === expected.status && got.body === expected.body) continue
      const seen = wrong.get(request.kind)
      if (seen) seen.count++
      else wrong.set(request.kind, { count: 1, first: got })
    }
  }
  await Promise.all(Array.from({ length: settings.connections }, client))
  agent.destroy()
  return { answered, errors, seconds: (performance.now() - started) / 1000 }
}

/** The first answer of each kind, over fetch; its status must be the one the kind expects. */
async function goldenAnswers(port: number, requests: SoakRequest[]): Promise<Map<string, Golden>> {
  const golden = new Map<string, Golden>()
  for (const request of requests) {
    const body = request.body === undefined ? undefined : typeof request.body === 'string' ? request.body : new Uint8Array(request.body)
    const response = await fetch(`http://127.0.0.1:${port}${request.path}`, { method: request.method, headers: request.headers, body })
    const text = await response.text()
    if (response.status !== request.status) throw new Error(`${request.kind}: expected HTTP ${request.status}, got ${response.status}: ${text}`)
    const envelope = JSON.parse(text) as { status?: unknown; message?: unknown; data?: unknown }
    if (typeof envelope.status !== 'boolean' || typeof envelope.message !== 'string' || typeof envelope.data !== 'object') {
      throw new Error(`${request.kind}: not an envelope: ${text}`)
    }
    golden.set(request.kind, { status: response.status, body: text })
  }
  return golden
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)
const handleTotal = (handles: Record<string, number>) => Object.values(handles).reduce((sum, n) => sum + n, 0)
const describeHandles = (handles: Record<string, number>) =>
  Object.entries(handles)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, n]) => `${name}×${n}`)
    .join(' ')

async function runSoak(): Promise<number> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--server'], {
    execArgv: ['--expose-gc', '--min-semi-space-size=1', '--max-semi-space-size=1', '--import=tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  })
  const hardStop = setTimeout(() => {
    console.error(`soak: still running after ${HARD_LIMIT_MS / 60_000} min, stopping`)
    child.kill('SIGKILL')
    process.exit(1)
  }, HARD_LIMIT_MS)
  hardStop.unref()
  const childExited = once(child, 'exit')
  try {
    const messages: FromChild[] = []
    let wake: (() => void) | undefined
    child.on('message', (message: FromChild) => {
      messages.push(message)
      wake?.()
    })
    const next = async (): Promise<FromChild> => {
      while (messages.length === 0) {
        if (child.exitCode !== null) throw new Error(`the server exited with code ${child.exitCode}`)
        await new Promise<void>((resolve) => {
          wake = resolve
          setTimeout(resolve, 500)
        })
      }
      return messages.shift()!
    }
    const ready = await next()
    if (ready.type !== 'ready') throw new Error('expected ready')
    const sample = async (label: string, requests: number): Promise<Sample> => {
      child.send({ type: 'sample', label, requests } satisfies ToChild)
      const answer = await next()
      if (answer.type !== 'sample') throw new Error('expected a sample')
      return answer
    }

    const requests = await soakRequests(ready.tokens)
    const golden = await goldenAnswers(ready.port, requests)
    const kinds = new Set(requests.map((request) => request.kind.replace(/ user-\d+$/, '')))
    console.log(`soak: ${requests.length} request kinds (${kinds.size} distinct, ${USERS} JWT users), ${settings.connections} connections`)
    console.log(`soak: warm-up ${settings.warmup} requests, then ${settings.requests} in ${settings.slices} slices\n`)

    const wrong = new Map<string, Wrong>()
    const samples: Sample[] = [await sample('start (idle)', 0)]
    const runs: LoadResult[] = []
    let sent = 0
    runs.push(await load(ready.port, requests, golden, settings.warmup, wrong))
    sent += runs[0].answered
    samples.push(await sample('after warm-up', sent))
    const slice = Math.ceil(settings.requests / settings.slices)
    for (let i = 1; i <= settings.slices; i++) {
      const run = await load(ready.port, requests, golden, slice, wrong)
      runs.push(run)
      sent += run.answered
      samples.push(await sample(`after slice ${i}`, sent))
    }

    console.log('phase            requests    RSS MB  heap MB  external MB  open handles')
    for (const s of samples) {
      console.log(
        `${s.label.padEnd(16)} ${String(s.requests).padStart(8)}  ${mb(s.rss).padStart(8)} ${mb(s.heapUsed).padStart(8)} ${mb(s.external).padStart(12)}  ${handleTotal(s.handles)} (${describeHandles(s.handles)})`,
      )
    }
    const baseline = samples[1]
    const end = samples[samples.length - 1]
    const growth = (end.rss - baseline.rss) / baseline.rss
    const heapGrowth = (end.heapUsed - baseline.heapUsed) / baseline.heapUsed
    const seconds = runs.reduce((sum, run) => sum + run.seconds, 0)
    const errors = runs.reduce((sum, run) => sum + run.errors, 0)
    const measured = sent - runs[0].answered
    const differing = [...wrong.values()].reduce((sum, { count }) => sum + count, 0)
    console.log(`\nrequests: ${sent} answered in ${seconds.toFixed(1)} s (${Math.round(sent / seconds)} req/s); ${measured} after the warm-up`)
    console.log(`client errors: ${errors}; answers that differ from their kind's first answer: ${differing}`)
    console.log(`RSS after warm-up ${mb(baseline.rss)} MB -> end ${mb(end.rss)} MB: ${(growth * 100).toFixed(1)} % (limit ${(settings.maxGrowth * 100).toFixed(0)} %)`)
    console.log(`heap used after warm-up ${mb(baseline.heapUsed)} MB -> end ${mb(end.heapUsed)} MB: ${(heapGrowth * 100).toFixed(1)} %`)
    console.log(`open handles: start ${handleTotal(samples[0].handles)}, after warm-up ${handleTotal(baseline.handles)}, end ${handleTotal(end.handles)}`)

    const failures: string[] = []
    if (measured < settings.requests) failures.push(`only ${measured} of ${settings.requests} requests were answered`)
    if (growth >= settings.maxGrowth) failures.push(`RSS grew ${(growth * 100).toFixed(1)} % after the warm-up`)
    if (handleTotal(end.handles) > handleTotal(baseline.handles)) failures.push('open handles grew')
    if (errors > 0) failures.push(`${errors} requests failed on the client side (reset, timeout)`)
    for (const [kind, { count, first }] of wrong) {
      failures.push(`${count} answers of '${kind}' differ from its first answer; one was HTTP ${first.status} ${first.body.slice(0, 200)}`)
    }
    console.log(failures.length === 0 ? '\nsoak: PASS' : `\nsoak: FAIL\n- ${failures.join('\n- ')}`)
    return failures.length === 0 ? 0 : 1
  } finally {
    if (child.connected) child.send({ type: 'exit' } satisfies ToChild)
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
    await childExited
    clearTimeout(timer)
    clearTimeout(hardStop)
  }
}

if (process.argv.includes('--server')) {
  await runServer()
} else {
  process.exitCode = await runSoak()
}
