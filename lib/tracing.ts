import { context, ProxyTracerProvider, SpanKind, SpanStatusCode, trace, type Span, type Tracer, type TracerProvider } from '@opentelemetry/api'
import type { ExecutionInfo, ExecutionTrace, Instrument } from './engine.js'
import { isDeclaredFailure } from './declared-errors.js'
import { codeOf } from './errors.js'
import type { Result } from './result.js'

/** The instrumentation scope of every span the framework starts. */
export const TRACER_NAME = 'fastify-actions'

/** Span attribute names (docs/observability.md). */
export const spanAttributes = {
  service: 'fastify_actions.service',
  action: 'fastify_actions.action',
  intent: 'fastify_actions.intent',
  outcome: 'fastify_actions.outcome',
  errorCode: 'fastify_actions.error_code',
  hook: 'fastify_actions.hook',
  hookPhase: 'fastify_actions.hook.phase',
  hookCritical: 'fastify_actions.hook.critical',
} as const

// The API's no-op provider: what a proxy delegates to until an SDK registers a real one.
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate()

/** The provider the API would hand out now, or undefined while none is registered (the no-op). */
function activeProvider(): TracerProvider | undefined {
  const global = trace.getTracerProvider()
  const provider = global instanceof ProxyTracerProvider ? global.getDelegate() : global
  return provider === NOOP_PROVIDER ? undefined : provider
}

function settle(span: Span, result: Result<unknown, string>): void {
  if (result.ok) {
    span.setAttribute(spanAttributes.outcome, 'ok')
  } else {
    // A declared error's own code (`NOT_FOUND`): an identifier the action declares, never user data.
    const code = isDeclaredFailure(result) ? result.code : codeOf(result)
    span.setAttributes({ [spanAttributes.outcome]: 'error', [spanAttributes.errorCode]: code })
    // The code, not the text: an Err's text may carry user data.
    span.setStatus({ code: SpanStatusCode.ERROR, message: code })
  }
  span.end()
}

function startExecution(tracer: Tracer, { service, action, intent }: ExecutionInfo): ExecutionTrace {
  const span = tracer.startSpan(`${service}.${action}`, {
    kind: SpanKind.INTERNAL,
    attributes: { [spanAttributes.service]: service, [spanAttributes.action]: action, [spanAttributes.intent]: intent },
  })
  const inside = trace.setSpan(context.active(), span)
  return {
    run: (fn) => context.with(inside, fn),
    hook(name, phase, critical) {
      const child = tracer.startSpan(
        `hook ${phase} ${name}`,
        { kind: SpanKind.INTERNAL, attributes: { [spanAttributes.hook]: name, [spanAttributes.hookPhase]: phase, [spanAttributes.hookCritical]: critical } },
        inside,
      )
      return (result) => settle(child, result)
    },
    end: (result) => settle(span, result),
  }
}

/**
 * The OpenTelemetry instrument for the engine: one span per action execution (`<service>.<action>`,
 * attributes service, action, intent, outcome, error code), each hook a child span. Spans go to
 * whatever TracerProvider the application registered (an SDK, @fastify/otel's…); while none is
 * registered an execution costs one lookup and no span.
 */
export function createOtelInstrument(version?: string): Instrument {
  let provider: TracerProvider | undefined
  let tracer: Tracer | undefined
  return (execution) => {
    const current = activeProvider()
    if (current === undefined) return undefined
    if (current !== provider || tracer === undefined) {
      provider = current
      tracer = current.getTracer(TRACER_NAME, version)
    }
    return startExecution(tracer, execution)
  }
}
