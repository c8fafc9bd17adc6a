import t from 'tap'
import { context, SpanStatusCode, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import Fastify from 'fastify'
import Type from 'typebox'
import { createAction, Err, Fail, fastifyActions, Ok, type Service } from '../lib/index.js'
import { createOtelInstrument, spanAttributes as A, TRACER_NAME } from '../lib/tracing.js'
import { buildServer, execute } from './helpers/server.js'

// One span per action execution, hooks as child spans, spans the handler starts nested inside;
// nothing at all while no tracer provider is registered.

const addTag = createAction({ name: 'addTag', description: 'before hook', handler: (data) => Ok({ ...(data as object), tag: 't' }) })
const flaky = createAction({ name: 'flaky', description: 'failing non-critical hook', handler: () => Err('hook says no') })
const wrap = createAction({ name: 'wrap', description: 'after hook', handler: (data) => Ok({ wrapped: data }) })
const main = createAction({
  name: 'main',
  description: 'hooked',
  validation: Type.Object({ n: Type.Number(), tag: Type.String() }),
  hooks: {
    before: [
      { service: 'svc', action: 'addTag', isCritical: true },
      { service: 'svc', action: 'flaky', isCritical: false },
    ],
    after: [{ service: 'svc', action: 'wrap', isCritical: true }],
  },
  handler: (data) => {
    trace.getTracer('user-code').startActiveSpan('db.query', (span) => span.end())
    return Ok({ n: data.n })
  },
})
const refuses = createAction({ name: 'refuses', description: 'Err', handler: () => Err('nope') })
const declares = createAction({ name: 'declares', description: 'A declared error', errors: { NOT_FOUND: { status: 404 } }, handler: () => Fail('NOT_FOUND') })
const service: Service = { name: 'svc', description: 'traced', actions: [addTag, flaky, wrap, main, refuses, declares] }

const info = { service: 'svc', action: 'main', intent: 'execute' } as const

t.test('no provider registered: the instrument returns no trace (zero cost) and executions run', async (t) => {
  t.equal(createOtelInstrument()(info), undefined)
  const server = await buildServer({ services: [service] })
  t.teardown(() => server.close())
  t.equal((await execute(server.app, 'svc', 'main', { n: 1 })).statusCode, 200)
})

t.test('with a provider', async (t) => {
  const exporter = new InMemorySpanExporter()
  const contextManager = new AsyncLocalStorageContextManager().enable()
  context.setGlobalContextManager(contextManager)
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }))
  t.teardown(() => {
    trace.disable()
    context.disable()
  })
  const server = await buildServer({ services: [service] })
  t.teardown(() => server.close())
  const byName = () => new Map(exporter.getFinishedSpans().map((span) => [span.name, span]))
  const parentOf = (span: ReadableSpan | undefined) => span?.parentSpanContext?.spanId

  t.test('one span per execution, its hooks and the handler\'s own spans as children', async (t) => {
    exporter.reset()
    const answer = await execute(server.app, 'svc', 'main', { n: 1 })
    t.equal(answer.statusCode, 200)
    const spans = byName()
    t.same([...spans.keys()].sort(), ['db.query', 'hook after svc.wrap', 'hook before svc.addTag', 'hook before svc.flaky', 'svc.main'])
    const action = spans.get('svc.main')!
    t.equal(action.instrumentationScope.name, TRACER_NAME)
    t.same(action.attributes, { [A.service]: 'svc', [A.action]: 'main', [A.intent]: 'execute', [A.outcome]: 'ok' })
    t.equal(action.status.code, SpanStatusCode.UNSET)
    const id = action.spanContext().spanId
    for (const name of ['hook before svc.addTag', 'hook before svc.flaky', 'hook after svc.wrap', 'db.query']) t.equal(parentOf(spans.get(name)), id, `${name} is a child`)
    t.same(spans.get('hook before svc.flaky')!.attributes, {
      [A.hook]: 'svc.flaky',
      [A.hookPhase]: 'before',
      [A.hookCritical]: false,
      [A.outcome]: 'error',
      [A.errorCode]: 'FA_ERR_ACTION_FAILED',
    })
    t.equal(spans.get('hook after svc.wrap')!.attributes[A.outcome], 'ok')
  })

  t.test('failures carry the outcome, the error code and an error status (the code, not the text)', async (t) => {
    exporter.reset()
    t.equal((await execute(server.app, 'svc', 'refuses')).statusCode, 400)
    t.equal((await execute(server.app, 'svc', 'main', { n: 'x' })).statusCode, 400)
    const [refused, invalid] = exporter.getFinishedSpans().filter((span) => span.name.startsWith('svc.'))
    t.same(refused.attributes, { [A.service]: 'svc', [A.action]: 'refuses', [A.intent]: 'execute', [A.outcome]: 'error', [A.errorCode]: 'FA_ERR_ACTION_FAILED' })
    t.same(refused.status, { code: SpanStatusCode.ERROR, message: 'FA_ERR_ACTION_FAILED' })
    t.equal(invalid.name, 'svc.main')
    t.equal(invalid.attributes[A.errorCode], 'FA_ERR_VALIDATION')
  })

  t.test('a declared error carries its declared code', async (t) => {
    exporter.reset()
    t.equal((await execute(server.app, 'svc', 'declares')).statusCode, 404)
    const [declared] = exporter.getFinishedSpans()
    t.same(declared.attributes, { [A.service]: 'svc', [A.action]: 'declares', [A.intent]: 'execute', [A.outcome]: 'error', [A.errorCode]: 'NOT_FOUND' })
    t.same(declared.status, { code: SpanStatusCode.ERROR, message: 'NOT_FOUND' })
  })

  t.test('an execution inside an active span (an HTTP span from @fastify/otel, say) is its child', async (t) => {
    exporter.reset()
    const outer = trace.getTracer('http').startSpan('POST /api/services')
    await context.with(trace.setSpan(context.active(), outer), () => execute(server.app, 'svc', 'refuses'))
    outer.end()
    t.equal(parentOf(byName().get('svc.refuses')), outer.spanContext().spanId)
  })

  t.test('the engine alone (no HTTP) is traced the same way', async (t) => {
    exporter.reset()
    const result = await server.engine.executeAction('svc', 'refuses', {}, server.context)
    t.equal(result.ok, false)
    t.same([...byName().keys()], ['svc.refuses'])
  })

  t.test('with @fastify/otel (the HTTP instrumentation) the action span nests under the request span', async (t) => {
    exporter.reset()
    const instrumentation = new FastifyOtelInstrumentation()
    instrumentation.setTracerProvider(trace.getTracerProvider())
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(instrumentation.plugin())
    await app.register(fastifyActions, { serverName: 'otel', logServices: false, services: [service], rest: { baseUrl: '/api', allowedOrigins: [] } })
    const response = await app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'execute', service: 'svc', action: 'refuses', payload: {} } })
    t.equal(response.statusCode, 400)
    const spans = exporter.getFinishedSpans()
    const action = spans.find((span) => span.name === 'svc.refuses')
    t.ok(action, 'the action span')
    // Walk up from the action span: it reaches the span @fastify/otel opened for the request.
    const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]))
    const ancestors: string[] = []
    for (let span = action; span?.parentSpanContext; span = byId.get(span.parentSpanContext.spanId)) {
      const parent = byId.get(span.parentSpanContext.spanId)
      if (parent) ancestors.push(parent.instrumentationScope.name)
    }
    t.ok(ancestors.includes('@fastify/otel'), `an ancestor comes from @fastify/otel: ${ancestors.join(' < ')}`)
    t.equal(action?.spanContext().traceId, spans.find((span) => span.instrumentationScope.name === '@fastify/otel')?.spanContext().traceId, 'one trace')
  })

  t.test('with createServer: @fastify/otel registers itself on the new instance (registerOnInitialization)', async (t) => {
    exporter.reset()
    const instrumentation = new FastifyOtelInstrumentation({ registerOnInitialization: true })
    instrumentation.setTracerProvider(trace.getTracerProvider())
    t.teardown(() => instrumentation.disable())
    const traced = await buildServer({ services: [service] })
    t.teardown(() => traced.close())
    t.equal((await execute(traced.app, 'svc', 'refuses')).statusCode, 400)
    const spans = exporter.getFinishedSpans()
    const action = spans.find((span) => span.name === 'svc.refuses')
    const http = spans.filter((span) => span.instrumentationScope.name === '@fastify/otel')
    t.ok(http.length > 0, 'request spans from @fastify/otel')
    t.ok(http.some((span) => span.spanContext().spanId === action?.parentSpanContext?.spanId), 'the action span is a child of one of them')
  })

  t.test('once the provider is gone, nothing is traced again', async (t) => {
    trace.disable()
    exporter.reset()
    t.equal((await execute(server.app, 'svc', 'refuses')).statusCode, 400)
    t.same(exporter.getFinishedSpans(), [])
  })
})
