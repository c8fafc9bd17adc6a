/**
 * Every text the framework answers with lives here, the way Fastify keeps its errors in one module.
 * Tests import them from this file instead of repeating them.
 */
export const messages = {
  invalidBody: 'Invalid or missing JSON body',
  invalidRequest: 'Invalid request body',
  validationFailed: 'Validation failed',
  discoveryDisabled: 'API discovery is disabled',
  discoverySecret: 'Invalid or missing discovery secret',
  unsupportedMediaType: 'Unsupported media type',
  bodyTooLarge: 'Request body too large',
  internal: 'Internal server error',
  formDataRouting: "Form-data must include 'intent', 'service', and 'action' fields",
  emptyServices: 'createServer: config.services must contain at least one service',
  notInitialized: 'getContext: Server not initialized. Call createServer first.',
  noDatabase: 'createModel: No database available.',
  wildcardExecute: (service: string, action: string) =>
    `Cannot execute '${service}.${action}': wildcard '*' is only allowed for explore and schema; name a specific service and action`,
  serviceNotFound: (service: string) => `Service '${service}' not found`,
  actionNotFound: (service: string, action: string) => `Action '${action}' not found in service '${service}'`,
  executed: (service: string, action: string) => `Action '${service}.${action}' executed`,
  routeNotFound: (baseUrl: string) => `Route not found. Use POST ${baseUrl}/services for all operations.`,
  running: (serverName: string) => `${serverName} is running`,
  hookFailed: (hook: string, error: string) => `Hook '${hook}' failed: ${error}`,
  authFailed: (reason: string) => `Authentication failed: ${reason}`,
  rateLimited: (seconds: number) => `Rate limit exceeded, retry in ${seconds} seconds`,
  actionTimedOut: (name: string, ms: number) => `Action '${name}' timed out after ${ms}ms`,
  handlerNotResult: (service: string, action: string) =>
    `Action '${service}.${action}' returned a value that is not a Result; return Ok(value) or Err(message)`,
} as const
