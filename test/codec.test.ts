/**
 * The wire codec (lib/answer.ts), table-driven: the same results go out through the JSON endpoint, a
 * per-action route, a stream's final SSE frame, MCP over HTTP and MCP over stdio, and every surface
 * gives the same status (where its wire carries one), the same envelope and the same log decision
 * (a server fault logged with its code and action; nothing logged otherwise).
 */
import t, { type Test } from 'tap'
import { PassThrough } from 'node:stream'
import type { AddressInfo } from 'node:net'
import Type from 'typebox'
import { createAction, createService, Err, Fail, messages, Ok } from '../lib/index.js'
import { serveMcpOverStdio } from '../lib/cli/mcp.js'
import { buildServer } from './helpers/server.js'
import { openStream } from './helpers/sse.js'
import { rawPost } from './helpers/mcp.js'

/** Waits for the execution's signal: a handler that never answers on its own (the timeout ends it). */
const forever = (signal: AbortSignal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))

const errors = {
  NOT_FOUND: { status: 404, message: 'No such thing', data: Type.Object({ id: Type.String() }) },
  BROKEN: { status: 503, message: 'Upstream broken' },
}
const output = Type.Object({ n: Type.Optional(Type.Number()), any: Type.Optional(Type.Any()) })
const input = Type.Object({ case: Type.String() })
type Case = 'ok' | 'err' | 'declared' | 'declaredMismatch' | 'declared5xx' | 'thrown' | 'timeout' | 'function'

/** The result each case ends with, from a plain action or as the final value of a stream. */
function ending(which: string): unknown {
  switch (which) {
    case 'ok':
      return Ok({ n: 1 })
    case 'err':
      return Err('nope')
    case 'declared':
      return Fail('NOT_FOUND', { id: 'a' })
    case 'declaredMismatch':
      // 5 where a string is declared: the 500, never the coerced "5".
      return Fail('NOT_FOUND', { id: 5 as unknown as string })
    case 'declared5xx':
      return Fail('BROKEN')
    default:
      throw new Error('boom')
  }
}

const run = createAction({
  name: 'run',
  description: 'Ends with the case asked for',
  validation: input,
  output,
  errors,
  timeout: 200,
  handler: async (data, context) => {
    if (data.case === 'timeout') await forever(context.signal)
    // A value JSON cannot carry where the schema allows any value.
    if (data.case === 'function') return Ok({ any: () => 1 })
    return ending(data.case) as never
  },
})

const stream = createAction({
  name: 'stream',
  description: 'Yields nothing, then ends with the case asked for',
  validation: input,
  output,
  errors,
  timeout: 200,
  handler: async function* (data, context) {
    if (data.case === 'timeout') await forever(context.signal)
    if (data.case === 'function') yield { any: () => 1 }
    return ending(data.case) as never
  },
})

const services = [createService({ name: 'codec', description: 'One result, every surface', actions: [run, stream] })]

interface Seen {
  /** The HTTP status, where the surface's wire carries one. */
  status?: number
  envelope: { status: boolean; message: string; data: Record<string, unknown> }
  /** The codes logged as server faults for this call. */
  logged: string[]
}

const internal = { status: false, message: messages.internal, data: {} }
const expected = (action: string): Record<Case | 'validation', Omit<Seen, 'envelope'> & { envelope: Seen['envelope'] | RegExp }> => ({
  ok: { status: 200, envelope: { status: true, message: messages.executed('codec', action), data: { n: 1 } }, logged: [] },
  err: { status: 400, envelope: { status: false, message: 'nope', data: {} }, logged: [] },
  declared: { status: 404, envelope: { status: false, message: 'No such thing', data: { code: 'NOT_FOUND', id: 'a' } }, logged: [] },
  declaredMismatch: { status: 500, envelope: internal, logged: ['FA_ERR_OUTPUT_MISMATCH'] },
  declared5xx: { status: 503, envelope: { status: false, message: 'Upstream broken', data: { code: 'BROKEN' } }, logged: ['FA_ERR_ACTION_FAILED'] },
  thrown: { status: 400, envelope: { status: false, message: 'boom', data: {} }, logged: [] },
  timeout: { status: 504, envelope: { status: false, message: messages.actionTimedOut(`codec.${action}`, 200), data: {} }, logged: ['FA_ERR_ACTION_TIMEOUT'] },
  function: { status: 500, envelope: internal, logged: ['FA_ERR_OUTPUT_MISMATCH'] },
  validation: { status: 400, envelope: { status: false, message: messages.validationFailed, data: { errors: [{ path: '/case', message: 'must be string' }] } }, logged: [] },
})

const payloadOf = (which: string) => (which === 'validation' ? { case: 5 } : { case: which })

async function listening(t: Test, exposeErrors: boolean) {
  const lines: Array<Record<string, unknown>> = []
  const stream = { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) }
  const server = await buildServer({
    services,
    exposeErrors,
    rest: { openapi: { enabled: false, actionRoutes: true }, mcp: { enabled: true }, fastify: { logger: { level: 'error', stream } } },
  })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = server.app.server.address() as AddressInfo
  /** The fault codes logged since the last call. */
  const faults = () => lines.splice(0).filter((line) => typeof line.code === 'string' && (line.action === 'codec.run' || line.action === 'codec.stream')).map((line) => line.code as string)
  return { server, port, faults }
}

/** A tool result read back as the envelope it stands for: an error's message and data, a success's data. */
function envelopeOfTool(result: { isError?: boolean; content: Array<{ text: string }> }, events = false): Seen['envelope'] {
  const texts = result.content.map((block) => block.text)
  if (!result.isError) return { status: true, message: '', data: JSON.parse(texts[0]) as Record<string, unknown> }
  // A stream's error result ends with its events; the data block sits between.
  const data = texts.length > (events ? 2 : 1) ? (JSON.parse(texts[1]) as Record<string, unknown>) : {}
  return { status: false, message: texts[0], data }
}

const toolCall = (id: number, which: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'codec_run', arguments: payloadOf(which) } })

/** One message through `fastify-actions mcp`'s stdio serving (the project's own endpoint, by inject). */
async function overStdio(app: Parameters<typeof serveMcpOverStdio>[0]['app'], message: unknown) {
  const input = new PassThrough()
  const output = new PassThrough()
  const written = new Promise<string>((resolve) => {
    let text = ''
    output.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve(text))
  })
  const serving = serveMcpOverStdio({ app, path: '/api/mcp', input, output })
  input.end(`${JSON.stringify(message)}\n`)
  await serving
  output.end()
  return JSON.parse((await written).trim()) as { result: { isError?: boolean; content: Array<{ text: string }> } }
}

const surfaces = ['endpoint', 'route', 'sse', 'mcp-http', 'mcp-stdio'] as const

async function through(surface: (typeof surfaces)[number], which: string, setup: Awaited<ReturnType<typeof listening>>): Promise<Seen> {
  const { port, server, faults } = setup
  faults()
  const headers = { 'content-type': 'application/json' }
  const payload = payloadOf(which)
  if (surface === 'endpoint' || surface === 'route') {
    const url = surface === 'endpoint' ? '/api/services' : '/api/services/codec/run'
    const body = surface === 'endpoint' ? { intent: 'execute', service: 'codec', action: 'run', payload } : payload
    const response = await fetch(`http://127.0.0.1:${port}${url}`, { method: 'POST', headers, body: JSON.stringify(body) })
    const envelope = JSON.parse(await response.text()) as Seen['envelope']
    return { status: response.status, envelope, logged: faults() }
  }
  if (surface === 'sse') {
    const opened = await openStream(port, '/api/services/codec/stream', payload)
    await opened.ended
    // Refused before the first byte: the JSON answer. Else the final frame (after any `message`).
    if (!String(opened.headers['content-type']).startsWith('text/event-stream')) {
      return { status: opened.status, envelope: JSON.parse(opened.text()) as Seen['envelope'], logged: faults() }
    }
    const last = opened.events.filter((event) => event.event === 'done' || event.event === 'error')
    t.equal(last.length, 1, `${which}: one final frame`)
    return { envelope: JSON.parse(last[0].data) as Seen['envelope'], logged: faults() }
  }
  const message = toolCall(1, which)
  const answer =
    surface === 'mcp-http'
      ? ((await rawPost(new URL(`http://127.0.0.1:${port}/api/mcp`), JSON.stringify(message), { 'mcp-protocol-version': '2025-06-18' })).json as { result: { isError?: boolean; content: Array<{ text: string }> } })
      : await overStdio(server.app, message)
  return { envelope: envelopeOfTool(answer.result), logged: faults() }
}

const cases: Array<Case | 'validation'> = ['ok', 'err', 'declared', 'declaredMismatch', 'declared5xx', 'thrown', 'timeout', 'function', 'validation']

t.test('every surface: the same status, envelope and log decision for the same result (development)', async (t) => {
  const setup = await listening(t, true)
  for (const which of cases) {
    for (const surface of surfaces) {
      const want = expected(surface === 'sse' ? 'stream' : 'run')[which]
      const seen = await through(surface, which, setup)
      const name = `${which} via ${surface}`
      // MCP's success is the value alone (no message); its wire has no status, nor has a started stream.
      const envelope = surface.startsWith('mcp') && seen.envelope.status ? { ...(want.envelope as Seen['envelope']), message: '' } : want.envelope
      t.same(seen.envelope, envelope, `${name}: envelope`)
      if (seen.status !== undefined) t.equal(seen.status, want.status, `${name}: status`)
      t.same(seen.logged, want.logged, `${name}: ${want.logged.length ? 'logged as a server fault' : 'nothing logged'}`)
    }
  }
})

t.test('a thrown error in production: the same hidden text on every surface, no fault logged by the codec', async (t) => {
  const setup = await listening(t, false)
  for (const surface of surfaces) {
    const seen = await through(surface, 'thrown', setup)
    t.match(seen.envelope, { status: false, message: /^Internal server error \(request id [^)]+\)$/, data: {} }, `${surface}: hidden`)
    t.notMatch(JSON.stringify(seen.envelope), /boom/, `${surface}: the error's text never leaves`)
    if (seen.status !== undefined) t.equal(seen.status, 400, `${surface}: status`)
    t.same(seen.logged, [], `${surface}: no codec fault`)
  }
})
