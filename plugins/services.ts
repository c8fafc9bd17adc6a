import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Action } from '../lib/action.js'
import { answerOf, type WireAnswer } from '../lib/answer.js'
import type { CompiledAction } from '../lib/registry.js'
import { runInRequestScope, type ServerContext } from '../lib/context.js'
import { createDiscovery, type Discovery } from '../lib/discovery.js'
import type { Authenticator, Engine } from '../lib/engine.js'
import { toJson, type ExternalRequest, type ExternalResponse } from '../lib/envelope.js'
import { fail, isFailure, type Failure } from '../lib/errors.js'
import { checkExternalRequest } from '../lib/request.js'
import type { ResolvedStreams } from './stream-config.js'
import { STREAM_DEFAULTS } from './stream-config.js'
import { createStreamDispatch } from './sse.js'
import { createDiscoveryGate } from './discovery-gate.js'
import { failureAnswer, replyWith, sendFailure } from './wire.js'
import { setupJsonBody } from './json-body.js'
import { requestStoreOf, scopesItsExecution } from './request-scope.js'
import { discardRest } from './unread-body.js'
import { concern } from './concern.js'
import { clientGone, httpPrincipal, keyFromHeaders, REPLAYED_HEADER, type IdempotencyGuard } from './idempotency.js'
import type { StoredAnswer } from '../lib/idempotency.js'
import { setupContentEncoding } from './content-encoding.js'
import { compressedAnswers, compressionOf } from './compression.js'
import type { ResolvedCompression } from './compression-config.js'

/**
 * Reads a multipart request on the services endpoint into an ExternalRequest whose payload is
 * `{ fields, files }` (for explore/schema: the form's `discoverySecret` as `payload.discoverySecret`),
 * or answers a Failure. The uploads plugin provides it; without it multipart is a 415. It gets the reply
 * to manage the connection when it answers before the body was read to its end.
 */
export type MultipartReader = (request: FastifyRequest, reply: FastifyReply, route?: ActionRoute) => Promise<ExternalRequest | Failure>

/** The action a per-action route names in its path: its form then carries no routing fields. */
export interface ActionRoute {
  service: string
  action: string
  /** The action is protected: its route authenticates in `onRequest`, before the body is read. */
  isProtected?: boolean
  /** Its route below the base URL (the action table's `route`). */
  path?: string
}

/** The uploads side of the endpoint; without it a multipart body is a 415. */
export interface MultipartSupport {
  /** Sets up multipart parsing in `scope`, which holds only the multipart route, and returns its reader. */
  register: (scope: FastifyInstance) => Promise<MultipartReader> | MultipartReader
  /** For JSON executes: the 415 of an action that declares another content type, if enforced. */
  checkJson?: (action: Action, contentType: string | undefined) => Failure | undefined
}

export interface ServicesPluginOptions {
  /** `rest.compression`: absent for none. */
  compression?: ResolvedCompression
  engine: Engine
  context: ServerContext<any>
  baseUrl: string
  discovery: { readonly enabled: boolean; readonly secret?: string }
  bodyLimit: number
  /** Deepest nesting of a JSON body (`rest.maxDepth`). */
  maxDepth: number
  multipart?: MultipartSupport
  /** `POST {baseUrl}/services/{service}/{action}` for every visible action (docs/openapi.md). */
  actionRoutes?: boolean
  /** `rest.streams`: keep-alive, longest duration, open streams per client (default: STREAM_DEFAULTS). */
  streams?: ResolvedStreams
  /** The client key of a request (the rate limiter's), for `streams.maxPerClient`; none without rate limiting. */
  clientKey?: (request: FastifyRequest) => string
  /** The auth plugin's authenticator (with `auth`): a protected action's route verifies the caller before reading the body. */
  authenticate?: Authenticator
  /** The idempotency rules (docs/idempotency.md), shared with MCP; only when an action declares `idempotency`. */
  idempotency?: IdempotencyGuard
}

/**
 * Routes multipart bodies to their own route: @fastify/multipart's hooks then run only for
 * multipart requests, never for the JSON ones on the hot path.
 */
const multipartConstraint: Parameters<FastifyInstance['addConstraintStrategy']>[0] = {
  name: 'fastifyActionsMultipart',
  storage() {
    const handlers = new Map<unknown, unknown>()
    return {
      get: (value) => (handlers.get(value) ?? null) as never,
      set: (value, store) => void handlers.set(value, store),
    }
  },
  deriveConstraint: (request) => isMultipart(request),
  mustMatchWhenDerived: false,
}

const MULTIPART = /^multipart\/form-data/i

function isMultipart(request: { headers: FastifyRequest['headers'] }): boolean {
  const type = request.headers['content-type']
  return type !== undefined && MULTIPART.test(type)
}

/*
 * The endpoint's handlers hand their answer back to Fastify instead of sending it themselves, so it is
 * written after the request scope (plugins/request-scope.ts) is left: async resources made while
 * writing (the write itself, the connection's keep-alive timer) would otherwise carry the scope, and
 * through it the request, its body and its reply, for as long as the connection stays open.
 */
/** A stream is sent by its own route (`reply.send` of a Readable): the reply itself is handed back. */
type Answer = ExternalResponse | string | FastifyReply

/** The status set, the envelope handed back for Fastify to send. */
const answerWith = (reply: FastifyReply, status: number, body: ExternalResponse): Answer => {
  reply.code(status)
  return body
}

/** The answers of `explore` and `schema`, behind the discovery switch and secret. */
function createDiscoveryAnswer(engine: Engine, options: ServicesPluginOptions['discovery']) {
  // Services are fixed at boot, so every discovery answer is built once, here.
  const discovery: Discovery | undefined = options.enabled ? createDiscovery(engine) : undefined
  const gate = createDiscoveryGate(options)
  return ({ intent, service, action, payload }: ExternalRequest): ExternalResponse | Failure => {
    const refused = gate(payload.discoverySecret)
    if (refused || !discovery) return refused ?? fail.discoveryDisabled()
    return intent === 'explore' ? discovery.explore(service, action) : discovery.schema(service, action, payload.output === true)
  }
}

type Dispatch = (reply: FastifyReply, request: ExternalRequest, json?: string) => Answer | Promise<Answer>

/**
 * The dispatch of every request the endpoint and the per-action routes read: discovery, refusals,
 * streams (one line: the SSE adapter owns them), then the engine and the codec.
 */
function createDispatch(app: FastifyInstance, options: ServicesPluginOptions): Dispatch {
  const { engine, context } = options
  const discover = createDiscoveryAnswer(engine, options.discovery)
  const checkJson = options.multipart?.checkJson
  // The action table, compiled once at boot by the engine's registry: serializers, event writers, routes.
  const table = engine.table
  const streams = createStreamDispatch(app, { engine, context, settings: options.streams ?? STREAM_DEFAULTS, clientKey: options.clientKey })

  // Not async: an execute waits on the engine's one promise; every other answer is handed back at once.
  // `json` is the request's content type when the body was JSON (multipart checks its own).
  return function dispatch(reply, request, json) {
    const { intent, service, action, payload } = request
    if (intent !== 'execute') {
      const answer = discover(request)
      return isFailure(answer) ? failureAnswer(reply, answer) : answerWith(reply, 200, answer)
    }
    if (service === '*' || action === '*') return failureAnswer(reply, fail.wildcardExecute(service, action))
    const entry = table.get(service, action)
    // `Deprecation`/`Sunset` (RFC 9745, RFC 8594), made once at boot in the action table.
    if (entry?.deprecation) reply.headers(entry.deprecation.headers)
    if (checkJson && json && entry) {
      const refused = checkJson(entry.action, json)
      if (refused) return failureAnswer(reply, refused)
    }
    if (entry?.stream && streams) return streams(reply, request, entry)
    if (entry?.action.idempotency && options.idempotency) return guardedExecute(options, options.idempotency, reply, request, entry)
    // A synchronous execution is answered at once: no promise, no microtask. The execution's scope
    // carries the request (the endpoint's handlers enter no scope of their own: `scopesItsExecution`).
    const outcome = engine.execute(service, action, payload, context, { request: requestStoreOf(reply.request, reply, context) })
    return outcome instanceof Promise ? outcome.then((result) => replyWith(reply, answerOf(result, entry, true))) : replyWith(reply, answerOf(outcome, entry, true))
  }
}

/** An action that takes Idempotency-Keys: refused, replayed, or run and its answer kept (plugins/idempotency.ts). */
function guardedExecute(options: ServicesPluginOptions, guard: IdempotencyGuard, reply: FastifyReply, request: ExternalRequest, entry: CompiledAction): Promise<Answer> {
  const { engine, context } = options
  const { service, action, payload } = request
  return guard<Answer>({
    action: entry.action,
    name: entry.name,
    payload,
    key: keyFromHeaders(reply.request),
    principal: httpPrincipal(reply.request, reply, context, entry.action, options.authenticate, options.clientKey),
    run: async () => {
      const answer = answerOf(await engine.execute(service, action, payload, context, { request: requestStoreOf(reply.request, reply, context) }), entry, true)
      return { value: replyWith(reply, answer), stored: keptAnswer(reply, answer) }
    },
    refuse: (failure) => failureAnswer(reply, failure),
    replay: (stored) => {
      reply.code(stored.status).type(JSON_TYPE).header(REPLAYED_HEADER, 'true')
      return stored.body
    },
    log: (message) => reply.log.error({ action: entry.name }, message),
  })
}

const JSON_TYPE = 'application/json; charset=utf-8'

/** The answer as it goes out, to keep for replays; nothing for a 5xx or a client that left. */
function keptAnswer(reply: FastifyReply, answer: WireAnswer): StoredAnswer | undefined {
  if (answer.status >= 500 || clientGone(reply.request, reply)) return undefined
  const body = answer.json ?? toJson(answer.envelope)
  return body === undefined ? undefined : { status: answer.status, body }
}

/** `POST {baseUrl}/services`: one endpoint, three intents; an adapter around `engine.executeAction`. */
async function serveServices(app: FastifyInstance, options: ServicesPluginOptions): Promise<void> {
  const { engine, context, baseUrl } = options
  const checkJson = options.multipart?.checkJson
  const dispatch = createDispatch(app, options)
  // gzip, deflate and br bodies decoded within the body limit; any other coding a 415.
  setupContentEncoding(app)
  // Answers over the threshold compressed in the handlers' own path (no onSend hook on these routes).
  const compression = compressionOf(app, options.compression)

  // A browser may send text/plain cross-site without a preflight: never execute it.
  app.removeContentTypeParser('text/plain')
  setupJsonBody(app, options.maxDepth)
  app.setReplySerializer((payload) => toJson(payload) ?? 'null')

  /** A per-action route: the body is the payload; then the very same dispatch as `intent: execute`. */
  function executeRoute(route: ActionRoute) {
    return (request: FastifyRequest, reply: FastifyReply) => {
      // No body (what sendBeacon or a no-cors fetch sends, without a Content-Type) and JSON `null` are
      // refused as on the one endpoint, whose `payload` is required: an action without input takes `{}`.
      const payload = request.body
      if (payload === undefined || payload === null) return failureAnswer(reply, fail.invalidBody())
      const external = { intent: 'execute', service: route.service, action: route.action, payload }
      const errors = checkExternalRequest(external)
      if (errors) return failureAnswer(reply, fail.invalidRequest(errors))
      return dispatch(reply, external as ExternalRequest, checkJson ? request.headers['content-type'] : undefined)
    }
  }
  const routes: ActionRoute[] = options.actionRoutes ? visibleActions(engine) : []
  // The route knows its action from the path: a protected one turns an anonymous caller away before
  // a byte of the body is read (the engine verifies again, as for the one endpoint).
  const authenticate = options.authenticate
  const routeOptions = (route: ActionRoute) => (route.isProtected && authenticate ? { onRequest: requireAuth(authenticate, context) } : {})

  const path = `${baseUrl}/services`
  // Returns the answer (or a promise of it): Fastify sends it once the handler is done, outside any
  // scope; the execution alone enters one, carrying the request.
  app.post(path, { bodyLimit: options.bodyLimit }, scopesItsExecution(compressedAnswers(compression, (request, reply) => {
    const body = request.body
    if (body === undefined || body === null) return failureAnswer(reply, fail.invalidBody())
    const errors = checkExternalRequest(body)
    if (errors) return failureAnswer(reply, fail.invalidRequest(errors))
    return dispatch(reply, body as ExternalRequest, checkJson ? request.headers['content-type'] : undefined)
  })))
  for (const route of routes) app.post(`${baseUrl}/${route.path}`, { bodyLimit: options.bodyLimit, ...routeOptions(route) }, scopesItsExecution(compressedAnswers(compression, executeRoute(route))))

  const multipart = options.multipart
  if (!multipart) return
  // Router-wide: a second registration on the same app must not add it again.
  if (!app.hasConstraintStrategy(multipartConstraint.name)) app.addConstraintStrategy(multipartConstraint)
  await app.register(concern('uploads', async function multipartRoute(scope) {
    const read = await multipart.register(scope)
    scope.post(path, { constraints: { [multipartConstraint.name]: true } }, compressedAnswers(compression, async (request, reply) => {
      const parsed = await read(request, reply)
      return isFailure(parsed) ? sendFailure(reply, parsed) : dispatch(reply, parsed)
    }))
    for (const route of routes) {
      scope.post(`${baseUrl}/${route.path}`, { constraints: { [multipartConstraint.name]: true }, ...routeOptions(route) }, compressedAnswers(compression, async (request, reply) => {
        const parsed = await read(request, reply, route)
        return isFailure(parsed) ? sendFailure(reply, parsed) : dispatch(reply, parsed)
      }))
    }
  }, { encapsulate: true }))
}

/** The actions the document lists (visible to REST discovery): hidden ones stay on the one endpoint. */
export function visibleActions(engine: Engine): ActionRoute[] {
  return engine.table.entries
    .filter((entry) => entry.visible)
    .map((entry) => ({ service: entry.serviceName, action: entry.action.name, isProtected: entry.action.isProtected === true, path: entry.route }))
}

/** A protected route's `onRequest`: the 401 envelope before the body is read; the unread rest is thrown away, then the connection closed. */
function requireAuth(authenticate: Authenticator, context: ServerContext<any>) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const auth = await runInRequestScope(requestStoreOf(request, reply, context), () => authenticate(context))
    if (auth.ok) return
    discardRest(request, reply)
    return sendFailure(reply, auth)
  }
}

/** The services endpoint and the per-action routes (uploads inside) as the plugin `fastify-actions-services`. */
export const servicesPlugin = concern('services', serveServices, { encapsulate: true, dependencies: ['errors', 'request-scope'] })
