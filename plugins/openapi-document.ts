import type { Action, Service } from '../lib/action.js'
import type { ErrorDescription } from '../lib/declared-errors.js'
import type { CompiledAction } from '../lib/registry.js'
import type { Engine } from '../lib/engine.js'
import { messages } from '../lib/messages.js'
import type { ResolvedAuth } from './auth-config.js'
import type { ResolvedOpenApi } from './openapi-config.js'
import { dataSchemaOf, statusByCode } from '../lib/answer.js'

export interface DocumentOptions {
  engine: Engine
  openapi: ResolvedOpenApi
  baseUrl: string
  auth?: ResolvedAuth
  rateLimited: boolean
}

type Schema = Record<string, unknown>

/** The error statuses a document lists, each one a status of `statusByCode` (the one table). */
const ERROR_STATUSES = [400, 401, 403, 404, 406, 413, 415, 429, 500, 504] as const
const statuses = new Set(Object.values(statusByCode))
const ERROR_TEXT: Record<number, string> = {
  400: 'A refused request: an invalid body or payload, a failed validation or hook, or the handler\'s `Err`',
  401: 'Authentication failed (protected actions)',
  403: 'Refused (discovery switched off or a wrong discovery secret; a cross-site cookie request)',
  404: 'No such route',
  406: 'A streaming action called with an `Accept` header that excludes `text/event-stream`',
  413: 'Request body too large',
  415: 'Unsupported media type, or a Content-Encoding other than gzip, deflate or br',
  429: 'Rate limit exceeded',
  500: 'Internal server error',
  504: 'The action timed out',
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const errorRef = (status: number) => ({ $ref: `#/components/responses/Error${status}` })

/** `$schema` names a dialect, which a schema inside an OpenAPI 3.1 document takes from the document. */
function embeddable(schema: Schema | null): Schema | null {
  if (!schema) return null
  const { $schema: _dialect, ...rest } = schema
  return rest
}

/** The success envelope of one action: `data` is the output schema (a non-object wrapped as `data.result`). */
function successSchema(entry: CompiledAction): Schema {
  const output = embeddable(entry.output)
  const data = output ? dataSchemaOf(output) : { type: 'object', additionalProperties: true }
  return {
    type: 'object',
    properties: { status: { type: 'boolean', const: true }, message: { type: 'string' }, data },
    required: ['status', 'message', 'data'],
  }
}

/** The JSON body of a per-action route: the action's input schema, or any object without one. */
function jsonBody(entry: CompiledAction): Schema {
  return embeddable(entry.input) ?? { type: 'object', additionalProperties: true }
}

/** An upload action's form: any fields, any files (files as binary parts). */
const uploadForm: Schema = {
  type: 'object',
  additionalProperties: {
    oneOf: [
      { type: 'string' },
      { type: 'string', contentMediaType: 'application/octet-stream' },
      { type: 'array', items: { oneOf: [{ type: 'string' }, { type: 'string', contentMediaType: 'application/octet-stream' }] } },
    ],
  },
}

function errorResponses(protectedAction: boolean, rateLimited: boolean, streaming = false): Record<string, unknown> {
  const responses: Record<string, unknown> = {}
  for (const status of ERROR_STATUSES) {
    if (!statuses.has(status)) continue
    if (status === 406 && !streaming) continue
    if (status === 401 && !protectedAction) continue
    if (status === 429 && !rateLimited) continue
    responses[String(status)] = errorRef(status)
  }
  return responses
}

/**
 * The responses with the action's declared errors merged in: one response per status, whose schema is
 * the declared error's envelope (its `data` the code beside the data), `anyOf` the envelopes when several
 * errors share the status or the framework answers it too. Ordered by status.
 */
function withDeclaredErrors(responses: Record<string, unknown>, entry: CompiledAction): Record<string, unknown> {
  const described = declaredOf(entry)
  if (!described) return responses
  const byStatus = new Map<number, ErrorDescription[]>()
  for (const error of described) byStatus.set(error.status, [...(byStatus.get(error.status) ?? []), error])
  const merged: Record<string, unknown> = { ...responses }
  for (const [status, errors] of byStatus) {
    const framework = responses[String(status)] !== undefined
    const schemas = [...(framework ? [ref('ErrorEnvelope')] : []), ...errors.map(declaredEnvelope)]
    const codes = errors.map((error) => `\`${error.code}\` (${error.message})`).join(', ')
    merged[String(status)] = {
      description: framework ? `${ERROR_TEXT[status] ?? 'A framework failure'}; or a declared error: ${codes}` : `Declared error: ${codes}`,
      content: { 'application/json': { schema: schemas.length === 1 ? schemas[0] : { anyOf: schemas } } },
    }
  }
  return Object.fromEntries(Object.entries(merged).sort(([a], [b]) => Number(a) - Number(b)))
}

/** A declared error's envelope: `status: false`, its message, `data` = `{ code, ...data }`. */
function declaredEnvelope(error: ErrorDescription): Schema {
  return {
    type: 'object',
    properties: { status: { type: 'boolean', const: false }, message: { type: 'string' }, data: error.dataSchema },
    required: ['status', 'message', 'data'],
  }
}

/** The security schemes a token may come through: the header, the cookie, or either (`auth.method: 'both'`). */
function schemeNames(auth: DocumentOptions['auth']): string[] {
  if (!auth) return []
  return auth.method === 'cookie' ? ['cookieAuth'] : auth.method === 'header' ? ['bearerAuth'] : ['bearerAuth', 'cookieAuth']
}

/** The JSON schema of each event's `data`, by event name: `message` the action's `output`, `done` and `error` the envelopes. */
function eventSchemas(entry: CompiledAction): Record<'message' | 'done' | 'error', Schema> {
  // A declared error (`Fail`) after the start is an error event with its own envelope, as its JSON answer is.
  const declared = declaredOf(entry)
  const done = { type: 'object', properties: { status: { type: 'boolean', const: true }, message: { type: 'string' }, data: { type: 'object', additionalProperties: true } }, required: ['status', 'message', 'data'] }
  return {
    message: embeddable(entry.output) ?? {},
    done,
    error: declared ? { anyOf: [ref('ErrorEnvelope'), ...declared.map(declaredEnvelope)] } : ref('ErrorEnvelope'),
  }
}

const STREAM_TEXT =
  'Server-Sent Events. Each yielded value is `id: <n>`, `event: message`, `data: <JSON>`; the stream ends with `event: done` (the success envelope of the final value) or `event: error` (the error envelope), both with `id: end`; `: keep-alive` comments while idle.'

/**
 * A streaming action's answer: Server-Sent Events. OpenAPI 3.1 has no schema for the items of a
 * stream, so the media type carries `x-events`: the schema of each event's `data` by event name.
 */
function streamResponse(entry: CompiledAction, version: '3.1' | '3.2'): Schema {
  const events = eventSchemas(entry)
  if (version === '3.2') return { itemSchema: eventItemSchema(events) }
  return { schema: { type: 'string', description: STREAM_TEXT }, 'x-events': events }
}

/**
 * OpenAPI 3.2's `itemSchema` for `text/event-stream` (its "Special Considerations for Server-Sent
 * Events"): each item is one parsed event, `{ event, data, id, retry }`, its fields strings as the
 * WHATWG parser gives them (`retry` an integer); `data` is JSON, described by `contentMediaType` and
 * `contentSchema`, one branch per event name.
 */
function eventItemSchema(events: Record<string, Schema>): Schema {
  return {
    type: 'object',
    description: STREAM_TEXT,
    required: ['event', 'data'],
    properties: {
      event: { type: 'string', enum: Object.keys(events) },
      data: { type: 'string' },
      id: { type: 'string' },
      retry: { type: 'integer', minimum: 0 },
    },
    oneOf: Object.entries(events).map(([event, schema]) => ({
      required: ['event'],
      properties: { event: { const: event }, data: { contentMediaType: 'application/json', contentSchema: schema } },
    })),
  }
}

/** The action's declared errors as the table described them at boot; undefined without any. */
function declaredOf(entry: CompiledAction): ErrorDescription[] | undefined {
  return entry.errors ? [...entry.errors.values()] : undefined
}

function operationOf(service: Service, entry: CompiledAction, options: DocumentOptions, operationId: string): Schema {
  const { action } = entry
  // On every operation (linters ask for it): the schemes of a protected action, none (`[]`) for a public one.
  const security = action.isProtected ? schemeNames(options.auth).map((name) => ({ [name]: [] })) : []
  const content: Record<string, unknown> = action.isSpecial
    ? { 'multipart/form-data': { schema: uploadForm } }
    : { 'application/json': { schema: jsonBody(entry) } }
  const streaming = entry.stream
  const answer = streaming ? { 'text/event-stream': streamResponse(entry, options.openapi.version) } : { 'application/json': { schema: successSchema(entry) } }
  return {
    operationId,
    summary: action.description || `${service.name}.${action.name}`,
    description: operationDescription(service, entry, options.baseUrl),
    tags: [service.name],
    requestBody: { required: true, content },
    responses: withDeclaredErrors(
      {
        '200': { description: messages.executed(service.name, action.name), content: answer },
        ...errorResponses(action.isProtected === true, options.rateLimited, streaming),
      },
      entry,
    ),
    security,
    ...(entry.deprecation ? { deprecated: true } : {}),
  }
}

/** An operation's description: the action's own, then how its route is called (linters and generators ask for one). */
function operationDescription(service: Service, entry: CompiledAction, baseUrl: string): string {
  const { action } = entry
  const body = action.isSpecial
    ? 'Takes the upload as `multipart/form-data` (its fields and files).'
    : 'Takes the payload as its JSON body.'
  const answer = entry.stream
    ? 'Answers Server-Sent Events (a request whose `Accept` excludes `text/event-stream` gets a 406).'
    : 'Answers the envelope `{ status, message, data }`.'
  const auth = action.isProtected ? ' Needs an authenticated caller.' : ''
  const same = `The same as \`{ intent: 'execute', service: '${service.name}', action: '${action.name}' }\` on \`POST ${baseUrl}/services\`.`
  const own = action.description ? `${action.description}\n\n` : ''
  const notice = entry.deprecation ? `${entry.deprecation.notice}\n\n` : ''
  return `${notice}${own}${body} ${answer}${auth} ${same}`
}

/**
 * An action that takes Idempotency-Keys (docs/idempotency.md): the header (required or optional), the
 * `Idempotent-Replayed` header of a replay, and the 409 (in flight) and 422 (key reused) answers. A
 * declared error on the same status keeps its response; the description says both.
 */
function withIdempotency(operation: Schema, action: Action): Schema {
  if (!action.idempotency) return operation
  const responses = { ...(operation.responses as Record<string, Schema>) }
  const envelope = { 'application/json': { schema: ref('ErrorEnvelope') } }
  const add = (status: string, description: string) => {
    const existing = responses[status]
    responses[status] = existing ? { ...existing, description: `${String(existing.description)}; or ${description}` } : { description, content: envelope }
  }
  add('409', '`FA_ERR_IDEMPOTENCY_IN_FLIGHT`: a request with this Idempotency-Key is still running; retry later')
  add('422', '`FA_ERR_IDEMPOTENCY_KEY_REUSED`: this Idempotency-Key was used for another request')
  const ok = responses['200']
  responses['200'] = {
    ...ok,
    headers: { 'Idempotent-Replayed': { description: '`true` on a replayed answer: the action did not run again', schema: { type: 'string', enum: ['true'] } } },
  }
  const header = {
    name: 'Idempotency-Key',
    in: 'header',
    required: action.idempotency === 'required',
    description: 'A unique key per operation (a UUID): a repeat with the same key and the same input gets the stored answer and does not run again.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
  }
  return {
    ...operation,
    parameters: [...((operation.parameters as unknown[] | undefined) ?? []), header],
    responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b))),
  }
}

/** A readable, unique operationId: `service_action` (letters, digits and `_` only), numbered on a clash. */
function operationIds(): (service: string, action: string) => string {
  const taken = new Set<string>()
  return (service, action) => {
    const base = `${service}_${action}`.replace(/[^A-Za-z0-9_]/g, '_')
    let id = base
    for (let n = 2; taken.has(id); n++) id = `${base}_${n}`
    taken.add(id)
    return id
  }
}

/**
 * The intent endpoint itself, `POST {baseUrl}/services`, with JSON as its one body: a request body
 * with two media types leaves generators (orval) sending no Content-Type at all. Its multipart form
 * (uploads) is documented on each upload action's own route, which takes the same form.
 */
function intentEndpoint(options: DocumentOptions): Schema {
  const { auth, baseUrl } = options
  return {
    post: {
      operationId: 'services',
      summary: 'The intent endpoint: execute an action, explore the services, or export their schemas',
      description:
        `Every action is reachable here with a JSON body \`{ intent, service, action, payload }\`: \`execute\` runs the action (the payload is its input), \`explore\` and \`schema\` list the services, their actions and their schemas when discovery is on. ` +
        `An upload action also takes its form here as \`multipart/form-data\` with \`intent\`, \`service\` and \`action\` fields; its own route (\`POST ${baseUrl}/services/{service}/{action}\`) documents that form.`,
      tags: ['services'],
      requestBody: { required: true, content: { 'application/json': { schema: ref('ExternalRequest') } } },
      responses: { '200': { description: 'The answer', content: { 'application/json': { schema: ref('Envelope') } } }, ...errorResponses(Boolean(auth), options.rateLimited) },
      // Anonymous (`{}`) or with a token: public actions need none, protected ones one.
      security: auth ? [{}, ...schemeNames(auth).map((name) => ({ [name]: [] }))] : [],
    },
  }
}

/** The envelopes and the intent endpoint's body, the schemas operations refer to. */
function componentSchemas(): Record<string, Schema> {
  const data = { type: 'object', additionalProperties: true }
  return {
    Envelope: { type: 'object', properties: { status: { type: 'boolean' }, message: { type: 'string' }, data }, required: ['status', 'message', 'data'] },
    ErrorEnvelope: { type: 'object', properties: { status: { type: 'boolean', const: false }, message: { type: 'string' }, data }, required: ['status', 'message', 'data'] },
    ExternalRequest: {
      type: 'object',
      properties: {
        intent: { type: 'string', enum: ['explore', 'execute', 'schema'] },
        service: { type: 'string' },
        action: { type: 'string' },
        payload: { type: 'object', additionalProperties: true },
      },
      required: ['intent', 'service', 'action', 'payload'],
    },
  }
}

/** The security schemes a token may come through, by `auth.method`; undefined without auth. */
function securitySchemesOf(auth: DocumentOptions['auth']): Record<string, Schema> | undefined {
  if (!auth) return undefined
  const header =
    auth.headerName === 'authorization'
      ? { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }
      : { type: 'apiKey', in: 'header', name: auth.headerName, description: 'Bearer <JWT>' }
  return {
    ...(auth.method !== 'cookie' ? { bearerAuth: header } : {}),
    ...(auth.method !== 'header' ? { cookieAuth: { type: 'apiKey', in: 'cookie', name: auth.cookieName, description: 'The JWT in a cookie' } } : {}),
  }
}

/**
 * The components the paths refer to, directly or through another component: a linter flags an
 * unused one (`Error429` without rate limiting), and a generator makes a type of it for nothing.
 */
function usedComponents(paths: Record<string, unknown>, components: Record<string, Record<string, unknown>>): Record<string, Record<string, unknown>> {
  const used = new Set<string>()
  const visit = (value: unknown) => {
    for (const [, kind, name] of JSON.stringify(value).matchAll(/"#\/components\/(\w+)\/([^"]+)"/g)) {
      const key = `${kind}/${name}`
      if (used.has(key)) continue
      used.add(key)
      visit(components[kind!]?.[name!])
    }
  }
  visit(paths)
  return Object.fromEntries(
    Object.entries(components).map(([kind, entries]) => [kind, Object.fromEntries(Object.entries(entries).filter(([name]) => used.has(`${kind}/${name}`)))]),
  )
}

/** The operations of the visible actions, by path, after the intent endpoint; the tags of their services. */
function actionPaths(options: DocumentOptions): { paths: Record<string, unknown>; tags: Array<{ name: string; description: string }> } {
  const { engine, baseUrl } = options
  const idOf = operationIds()
  const paths: Record<string, unknown> = { [`${baseUrl}/services`]: intentEndpoint(options) }
  const tags = [{ name: 'services', description: 'The one endpoint every action is reachable through' }]
  for (const service of engine.getServices().value) {
    const visible = engine.table.entries.filter((entry) => entry.visible && entry.serviceName === service.name)
    if (visible.length === 0) continue
    tags.push({ name: service.name, description: service.description })
    for (const entry of visible) {
      paths[`${baseUrl}/${entry.route}`] = { post: withIdempotency(operationOf(service, entry, options, idOf(service.name, entry.action.name)), entry.action) }
    }
  }
  return { paths, tags }
}

/**
 * The OpenAPI 3.1 (or, with `rest.openapi.version: '3.2'`, 3.2) document of the visible actions, built
 * once at boot: one operation per action on its own route, the intent endpoint itself, the envelopes,
 * the security of every operation, and only the components something refers to. Hidden actions
 * (`visibility.rest === false`) never appear: it shows no more than the `schema` intent.
 */
export function buildOpenApiDocument(options: DocumentOptions): Record<string, unknown> {
  const { openapi, auth } = options
  const { paths, tags } = actionPaths(options)
  const responses = Object.fromEntries(
    ERROR_STATUSES.filter((status) => statuses.has(status)).map((status) => [
      `Error${status}`,
      { description: ERROR_TEXT[status], content: { 'application/json': { schema: ref('ErrorEnvelope') } } },
    ]),
  )
  const { schemas, responses: used } = usedComponents(paths, { schemas: componentSchemas(), responses })
  const securitySchemes = securitySchemesOf(auth)
  return {
    ...openapi.extra,
    openapi: openapi.version === '3.2' ? '3.2.0' : '3.1.0',
    info: { ...openapi.info },
    // The paths carry the base URL: the server is the origin that serves the document, unless `rest.openapi.servers` says otherwise.
    servers: openapi.servers.map((server) => ({ ...server })),
    tags,
    paths,
    components: { schemas, responses: used, ...(securitySchemes ? { securitySchemes } : {}) },
  }
}
