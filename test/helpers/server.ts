import type { FastifyInstance, InjectOptions } from 'fastify'
import { createServer, type ActionsApp, type ExternalResponse, type RestConfig, type ServerConfig, type ServerInstance } from '../../lib/index.js'
import { echoService } from './fixtures.js'

export type TestConfig = Partial<Omit<ServerConfig, 'rest'>> & { rest?: Partial<RestConfig> | false }

/** A fresh server (never the singleton) with a REST app at `/api`, quiet, discovery on. */
export async function buildServer(overrides: TestConfig = {}): Promise<ServerInstance & { app: ActionsApp }> {
  const { rest, ...rest_of_config } = overrides
  const server = await createServer({
    serverName: 'test-server',
    logServices: false,
    forceNewInstance: true,
    services: [echoService],
    ...rest_of_config,
    rest: rest === false ? undefined : { baseUrl: '/api', allowedOrigins: [], discovery: { enabled: true }, ...rest },
  })
  return Object.assign(server, { app: server.rest?.app as ActionsApp })
}

export interface Answer<T extends Record<string, unknown> = Record<string, any>> {
  statusCode: number
  headers: Record<string, unknown>
  body: ExternalResponse<T>
}

/** POSTs a JSON body to `/api/services` through `inject` and parses the envelope. */
export async function post(app: FastifyInstance, body: unknown, options: Partial<InjectOptions> = {}): Promise<Answer> {
  const response = await app.inject({ method: 'POST', url: '/api/services', payload: body as InjectOptions['payload'], ...options })
  return { statusCode: response.statusCode, headers: response.headers, body: response.json() }
}

export function execute(app: FastifyInstance, service: string, action: string, payload: Record<string, unknown> = {}, options: Partial<InjectOptions> = {}) {
  return post(app, { intent: 'execute', service, action, payload }, options)
}
