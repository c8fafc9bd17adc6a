/**
 * Every text the framework answers with lives here, the way Fastify keeps its errors in one module.
 * Tests import them from this file instead of repeating them.
 */
export const messages = {
  invalidBody: 'Invalid or missing JSON body',
  invalidRequest: 'Invalid request body',
  badUrl: 'Malformed URL',
  badRequest: 'Bad request',
  requestTimeout: 'Request Timeout',
  headersTooLarge: 'Request Header Fields Too Large',
  validationFailed: 'Validation failed',
  discoveryDisabled: 'API discovery is disabled',
  discoverySecret: 'Invalid or missing discovery secret',
  unsupportedMediaType: 'Unsupported media type',
  bodyTooLarge: 'Request body too large',
  /** A `Content-Encoding` the server cannot decode (RFC 9110 8.4): the 415 names the ones it can. */
  unsupportedEncoding: (encoding: string, supported: readonly string[]) => `Unsupported Content-Encoding '${encoding}': send the body as ${supported.join(', ')} or unencoded`,
  /** An encoded body that is not what its `Content-Encoding` says (a corrupt gzip stream). */
  undecodableBody: (encoding: string) => `Request body is not valid ${encoding}`,
  internal: 'Internal server error',
  /** A thrown exception with `exposeErrors: false`: the text is logged under this id. */
  internalWithId: (id: string) => `Internal server error (request id ${id})`,
  formDataRouting: "Form-data must include 'intent', 'service', and 'action' fields",
  singletonReused: 'createServer: a server already exists; returning it. Pass forceNewInstance: true for a new one.',
  emptyServices: 'createServer: config.services must contain at least one service',
  notInitialized: 'getContext: Server not initialized. Call createServer first.',
  wildcardExecute: (service: string, action: string) =>
    `Cannot execute '${service}.${action}': wildcard '*' is only allowed for explore and schema; name a specific service and action`,
  serviceNotFound: (service: string) => `Service '${service}' not found`,
  actionNotFound: (service: string, action: string) => `Action '${action}' not found in service '${service}'`,
  // Joined, not a template literal: a template makes a rope (a V8 ConsString), and a rope in an answer
  // sends Node 26's JSON.stringify down its slower path for the whole answer (a 64 KiB answer: 133
  // against 80 µs). `join` writes one flat string. test/messages.test.ts checks it stays flat.
  executed: (service: string, action: string) => ["Action '", service, '.', action, "' executed"].join(''),
  routeNotFound: (baseUrl: string) => `Route not found. Use POST ${baseUrl}/services for all operations.`,
  running: (serverName: string) => `${serverName} is running`,
  hookFailed: (hook: string, error: string) => `Hook '${hook}' failed: ${error}`,
  authFailed: (reason: string) => `Authentication failed: ${reason}`,
  rateLimited: (seconds: number) => `Rate limit exceeded, retry in ${seconds} seconds`,
  actionTimedOut: (name: string, ms: number) => `Action '${name}' timed out after ${ms}ms`,
  /** The reason of an output mismatch when the schema allows any value and the value is one JSON cannot carry. */
  notJson: 'a value JSON cannot carry (a function, a symbol or undefined) where the schema allows any value',
  outputMismatch: (name: string, reason: string) => `'${name}' returned a value that does not match its output schema: ${reason}`,
  // Declared errors (lib/declared-errors.ts): boot refusals, FA_ERR_CONFIG.
  errorsNotObject: (action: string) => `Action '${action}': errors must be an object of declarations by code, e.g. { NOT_FOUND: { status: 404 } }`,
  errorCodeInvalid: (action: string, code: string) =>
    `Action '${action}' declares error '${code}': a code is upper-case letters, digits and underscores, starting with a letter (e.g. NOT_FOUND)`,
  errorCodeReserved: (action: string, code: string) =>
    `Action '${action}' declares error '${code}': codes starting with FA_ are the framework's own (FA_ERR_*, FA_CLIENT_*)`,
  errorDeclarationInvalid: (action: string, code: string) => `Action '${action}' declares error '${code}': a declaration is an object { status?, message?, data? }`,
  errorStatusInvalid: (action: string, code: string, status: unknown) =>
    `Action '${action}' declares error '${code}': status must be an integer from 400 to 599, got ${String(status)}`,
  errorMessageInvalid: (action: string, code: string) => `Action '${action}' declares error '${code}': message must be a string`,
  errorDataNoJsonSchema: (action: string, code: string) =>
    `Action '${action}' declares error '${code}': data must be a TypeBox schema or a Standard Schema with JSON Schema export`,
  errorDataNotObject: (action: string, code: string) => `Action '${action}' declares error '${code}': data must describe an object (type: 'object')`,
  errorDataHasCode: (action: string, code: string) =>
    `Action '${action}' declares error '${code}': data must not have a 'code' property (the code is sent beside the data)`,
  errorDataMismatch: (name: string, code: string, reason: string) => `'${name}' returned Fail('${code}') with data that does not match its schema: ${reason}`,
  undeclaredError: (action: string, code: string) => `'${action}' returned Fail('${code}'), a code it does not declare: answered as a plain Err`,
  notAResult: (what: string) => `'${what}' returned a value that is not a Result; return Ok(value) or Err(message)`,
  servicesListed: 'Services listed',
  actionsListed: (service: string) => `Actions of service '${service}' listed`,
  actionDescribed: (service: string, action: string) => `Action '${service}.${action}' described`,
  schemasExported: 'Schemas exported',
  serviceSchemasExported: (service: string) => `Schemas of service '${service}' exported`,
  actionSchemaExported: (service: string, action: string) => `Schema of action '${service}.${action}' exported`,
  corsAllowedOrigins: 'createServer: rest.allowedOrigins must be an array of origin strings',
  corsInvalidOptions: 'CORS options must be an object',
  corsInvalidOption: (name: string) => `CORS option '${name}' has an invalid value`,
  corsInvalidRule: (index: number) =>
    `createServer: rest.cors.addCors${index >= 0 ? `[${index}]` : ''} must be a list of { path, options?, resolver? } rules`,
  corsInvalidResolverResult: (type: string) => `CORS resolver returned a ${type}; expected a boolean, options or undefined`,
  corsRuleFailed: (path: string, error: string) => `CORS rule '${path}' failed, origin denied: ${error}`,
  staticUnavailable: (runtime: string, error: string) =>
    `static adapter for runtime '${runtime}' failed to load; /assets/* is not served: ${error}`,
  staticNoPlugin: 'the module has no Fastify plugin as its default export',
  /** The `<reason>` of `authFailed(reason)`. */
  authReasons: {
    missingToken: 'missing token',
    badScheme: "expected 'Bearer <token>'",
    malformed: 'malformed token',
    unsigned: 'token is not signed',
    algorithm: 'token algorithm not allowed',
    signature: 'invalid signature',
    expired: 'token expired',
    notYetValid: 'token not yet valid',
    claimRefused: 'token claim not accepted',
    claimMissing: 'token claim missing',
    invalid: 'invalid token',
    noUserId: 'token has no user id',
    noRequest: 'no HTTP request to read a token from',
    crossSite: 'cross-site request from an origin not in allowedOrigins',
  },
  authNoSecret: 'createServer: auth.secret must be a non-empty string',
  authPlaceholderSecret: 'createServer: auth.secret is a published placeholder (anyone can sign tokens with it); in production set a random one, e.g. `openssl rand -base64 32`',
  authShortSecret: (bytes: number, min: number) =>
    `createServer: auth.secret is ${bytes} bytes; in production an HMAC secret needs at least ${min} (e.g. \`openssl rand -base64 32\`)`,
  guardBadSelector: (selector: string) =>
    `addGuard: the selector must be { service?, action? } with names or '*', got ${selector}`,
  authBadMethod: (method: string) => `createServer: auth.method must be 'header', 'cookie' or 'both', got '${method}'`,
  authBadAlgorithms: "createServer: auth.algorithms must list at least one signing algorithm and never 'none'",
  rateLimitKeyFallback: (header: string, source: string) =>
    `no '${header}' header; rate limit keyed by ${source === 'unknown-client' ? "the shared 'unknown-client' key" : `'${source}'`}`,
  rateLimitStoreDown: (error: string) => `rate-limit store failed, requests are served without rate limiting: ${error}`,
  rateLimitStoreUp: 'rate-limit store answers again, rate limiting resumed',
  // Data helpers (lib/handle-error.ts, lib/db/)
  noLogger: 'handleError: No logger available. Pass one or set resources.logger.',
  notATable: 'getValidationSchemas: expected a Drizzle table',
  relationSchema: 'getValidationSchemas: got a relations(...) schema; pass the table itself',
  notFound: (entity: string) => `${capitalize(entity)} not found`,
  invalidData: (entity: string) => `Invalid ${entity} data`,
  creationNoData: (entity: string) => `${capitalize(entity)} creation returned no data`,
  unknownCursorColumn: (column: string, entity: string) => `Cursor column '${column}' does not exist on ${entity} table`,
  invalidPagination: 'Invalid pagination options',
  databaseFailed: (entity: string, operation: string) => `Database error in ${entity}.${operation}`,
  // Issuing tokens from an action (plugins/token.ts)
  tokenNoRequest: 'signToken: no HTTP request in scope; call it inside an action executed over REST',
  tokenNoAuth: 'signToken: authentication is not configured (config.auth)',
  tokenVerifyOnly: 'signToken: auth.secret is a public key, which can verify tokens but not sign them',
  tokenNoCookies: "signToken: setting a cookie needs auth.method 'cookie' or 'both'",
  tokenCookieNoReply: 'signToken: this call has no HTTP reply to carry a cookie (an MCP tool call): return the token in the result instead',
  tokenExpiresInInvalid: (value: string) => `expiresIn must be a positive number of seconds or a duration such as '8h' or '7d', got ${value}`,
  tokenExpiresInTooLong: (value: string) =>
    `expiresIn ${value} is over a year: it is in seconds (as @fastify/jwt takes it), not milliseconds; for 8 hours pass 8 * 3600 or '8h'`,
  // Uploads (lib/uploads/, plugins/uploads.ts)
  invalidMultipart: 'Invalid multipart form-data body',
  reservedFieldName: "form-data field names such as '__proto__' or 'constructor' are not allowed",
  uploadLimitExceeded: 'upload limit exceeded',
  fileTypeNotAllowed: 'file type not allowed',
  mixedKeyTypes: 'mixed key types not allowed',
  mixedKeyTypesHint:
    "In flat upload mode a form key carries files or text values, not both: rename the keys or set isSpecial.uploadMode to 'structured'",
  fileNameTooLong: 'file name too long',
  emptyFile: 'empty file not allowed',
  fileTooSmall: 'file too small',
  // MCP endpoint (plugins/mcp.ts, lib/mcp/)
  mcpUnknownTool: (name: string) => `Unknown tool: ${name}`,
  mcpParseError: 'Parse error: Invalid JSON',
  mcpInvalidRequest: (reason: string) => `Invalid Request: ${reason}`,
  mcpNoBatches: 'JSON-RPC batches are not accepted; send one message per request',
  mcpMethodNotAllowed: 'Method not allowed.',
  mcpArgumentsNotObject: 'Invalid params: arguments must be an object',
  mcpNameNotString: 'Invalid params: name must be a string (a tool name)',
  mcpListsHiddenActions: (discovery: string) =>
    `rest.mcp is on and ${discovery}: MCP tools/list still shows every action visible to MCP to any caller. Set rest.mcp.requireAuth (with auth) to ask for a token first, or visibility: { mcp: false } on actions agents must not see`,
  mcpRequireAuthWithoutAuth: 'createServer: rest.mcp.requireAuth needs config.auth (the JWT secret to verify tokens with)',
  mcpInputNotObject: (action: string, type: string) =>
    `MCP: action '${action}' has an input schema ${type}; tools take an object of arguments. Give it an object schema or set visibility.mcp: false`,
  mcpToolNameCollision: (name: string, first: string, second: string) =>
    `MCP: actions '${first}' and '${second}' both become tool '${name}'; rename one or set visibility.mcp: false on one`,
  fileNameInvalid: 'file name contains control characters',
  multipartPartInvalid: (reason: string) => `form-data part refused: ${reason}`,
  partReasons: {
    noName: 'a file part has no name',
    lineBreakInName: 'its name contains a line break',
    lineBreakInFilename: 'its file name contains a line break',
    notFormData: 'it has no Content-Disposition: form-data header',
    headersTooLarge: 'its headers are too large',
    dropped: 'the parser could not read it (a malformed Content-Disposition)',
  },
  multipartTooLarge: 'multipart body too large',
  multipartPreambleTooLarge: 'text before the first boundary is too large',
  multipartEpilogueTooLarge: 'text after the closing boundary is too large',
  // Hardening (docs/security.md)
  jsonTooDeep: (max: number) => `JSON body nested deeper than ${max} levels`,
  underPressure: 'Service under pressure, retry later',
  // Streaming actions (lib/stream.ts, plugins/sse.ts)
  streamNotAcceptable: (name: string) => `Action '${name}' streams its answer: send the header 'Accept: text/event-stream'`,
  tooManyStreams: (max: number) => `Too many open streams for this client (at most ${max})`,
  streamDuration: (name: string, ms: number) => `Stream '${name}' ended after its longest duration of ${ms}ms`,
  shuttingDown: 'Server is shutting down',
  streamAsHook: (hook: string, owner: string) => `Hook '${hook}' of action '${owner}' is a streaming action; a hook must answer once`,
  streamNotIterable: (what: string) => `'${what}' is a streaming action but did not return an AsyncIterable`,
  hostNotAllowed: 'Host not allowed: list it in rest.allowedHosts',
  originNotAllowed: 'Origin not allowed: list it in rest.allowedOrigins',
  // Idempotency keys (lib/idempotency.ts, docs/idempotency.md)
  idempotencyKeyRequired: (name: string) => `Action '${name}' requires an Idempotency-Key header`,
  idempotencyKeyInvalid: 'Idempotency-Key must be 1 to 255 visible ASCII characters',
  idempotencyInFlight: 'A request with this Idempotency-Key is still in progress; retry later',
  idempotencyKeyReused: 'This Idempotency-Key was already used for another request',
  idempotencyUnavailable: 'Idempotency store unavailable, retry later',
  notASchema: (name: string, field: string, reason: string) =>
    `Action '${name}': ${field} must be a TypeBox schema, a Standard Schema validator or a JSON Schema object (${reason})`,
  idempotencyOnStream: (name: string) => `Action '${name}' is a streaming action and cannot declare idempotency`,
  idempotencyMode: (name: string, value: unknown) => `Action '${name}': idempotency must be 'required' or 'optional', got ${JSON.stringify(value)}`,
  secondUnnamedRegistration:
    "a second registration without a name: app.engine and app.serverContext stay the first registration's; give each registration a `name` (app.actions[name]) or reach this one with getActions(app, prefix)",
  hostCors:
    "the app already has @fastify/cors: its policy answers cross-origin requests and preflights for fastify-actions' routes too, and rest.allowedOrigins / rest.cors do not set CORS headers here (they still decide the cookie CSRF check); register fastify-actions in a scope without @fastify/cors to use its own",
  invalidServiceName: (name: string) =>
    `createServer: service name ${JSON.stringify(name)} must be 1 to 64 letters, digits, '_' or '-' ([A-Za-z0-9_-]): names become URL path segments and MCP tool names`,
  invalidActionName: (name: string, service: string) =>
    `createServer: action name ${JSON.stringify(name)} in service '${service}' must be 1 to 64 letters, digits, '_' or '-' ([A-Za-z0-9_-]): names become URL path segments and MCP tool names`,
  invalidDeprecation: (name: string, reason: string) => `createServer: action '${name}' has an invalid 'deprecated': ${reason}`,
  protectedWithoutAuth: (names: string) =>
    `actions marked isProtected run without authentication because the server has no auth config: ${names}`,
} as const

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}
