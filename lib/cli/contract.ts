/**
 * `fastify-actions contract`: the project's contract as a stable, key-sorted JSON snapshot: every
 * action's input, output, event and declared-error schemas, route, auth, visibility and
 * deprecation, the OpenAPI document and the MCP tool list. Built from the server without listening,
 * through the same answers its callers get (schema and explore intents, the document, tools/list).
 */
import { writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { CliError } from './errors.js'
import { routeOf } from './list.js'
import type { Values } from './package.js'
import { buildProjectServer, openProject, type Project, type ResolvedProject, type TableEntry } from './project.js'
import { sortKeys } from './schema-changes.js'

export const CONTRACT_FILE = 'contract.json'
export const CONTRACT_VERSION = 1

export interface ContractAction {
  service: string
  action: string
  description: string
  /** `visibility.rest`: false for an action hidden from discovery, the document, the client and MCP. */
  visible: boolean
  stream: boolean
  upload: boolean
  auth: { protected: boolean; accessControl: string[] }
  /** `POST <path>` of its own route; the one endpoint when the project serves no per-action routes; null when hidden. */
  route: string | null
  /** Its MCP tool's name; null when the project serves no MCP or hides it from agents. */
  tool: string | null
  input: unknown
  /** The value's schema (null for a streaming action, or when it declares none). */
  output: unknown
  /** A streaming action's event schema. */
  events: unknown
  errors: Record<string, { status: number; message: string; data: unknown }>
  deprecated: { since: string; sunset?: string; replacement?: string; message?: string } | null
}

export interface Contract {
  contract: number
  /** `POST {baseUrl}/services`: where the typed client and every intent go. */
  endpoint: string
  /** The MCP endpoint's path, or null. */
  mcp: string | null
  actions: Record<string, ContractAction>
  openapi: unknown
  tools: Array<Record<string, unknown>>
}

type Inject = (options: Record<string, unknown>) => Promise<{ statusCode: number; body: string }>

async function intent(inject: Inject, endpoint: string, body: Record<string, unknown>): Promise<any> {
  const response = await inject({ method: 'POST', url: endpoint, payload: body })
  if (response.statusCode !== 200) throw new CliError(`the ${body.intent} answer could not be read (HTTP ${response.statusCode})`)
  return JSON.parse(response.body).data
}

/** The MCP tool list through the project's own endpoint (stateless: one request), sorted by name. */
async function toolsOf(inject: Inject, path: string): Promise<Array<Record<string, unknown>>> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  const response = await inject({ method: 'POST', url: path, headers, payload: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} } })
  const tools = response.statusCode === 200 ? (JSON.parse(response.body).result?.tools as Array<Record<string, unknown>> | undefined) : undefined
  if (!tools) throw new CliError(`the MCP tool list could not be read from ${path} (HTTP ${response.statusCode})`)
  return [...tools].sort((a, b) => String(a.name).localeCompare(String(b.name)))
}

/** The OpenAPI document the project serves, else the one it would serve (a second build, with the document on). */
async function documentOf(project: Project, config: Record<string, unknown>, built: { app: { inject: Inject }; resolved: ResolvedProject }): Promise<unknown> {
  const served = built.resolved.config.rest?.openapi?.path
  const extra = served ? undefined : await buildProjectServer(project.root, config, (own) => ({ ...own, discovery: { enabled: true }, openapi: { ...own.openapi, enabled: true, actionRoutes: undefined, reference: false, path: '/openapi.json' }, mcp: undefined, rateLimiting: undefined, enableStatic: false }))
  try {
    const inject = (extra?.app ?? built.app).inject.bind(extra?.app ?? built.app) as Inject
    const document = await inject({ method: 'GET', url: served ?? '/openapi.json' })
    if (document.statusCode !== 200) throw new CliError(`the OpenAPI document could not be built (HTTP ${document.statusCode})`)
    return JSON.parse(document.body)
  } finally {
    await extra?.server.close()
  }
}

/**
 * Builds the contract of a project from its config: the server is built as the project mounts it
 * (never listening), and the routes, the base URL and the MCP path are read from what it resolved,
 * never derived again here (`rest.baseUrl: 'api/'` mounts `/api/services`).
 */
export async function buildContract(project: Project): Promise<Contract> {
  const config = await project.config()
  const built = await buildProjectServer(project.root, config, (own) => ({
    ...own,
    discovery: { enabled: true },
    openapi: typeof own.openapi === 'object' && own.openapi !== null ? { ...own.openapi, reference: false } : own.openapi,
    mcp: own.mcp ? { ...own.mcp, requireAuth: false } : undefined,
    rateLimiting: undefined,
    enableStatic: false,
  }))
  const { server, app, resolved } = built
  try {
    const inject = app.inject.bind(app) as Inject
    const rest = resolved.config.rest
    const mcp = rest.mcp?.path ?? null
    const endpoint = `${rest.baseUrl}/services`
    const schemas = await intent(inject, endpoint, { intent: 'schema', service: '*', action: '*', payload: { output: true } })
    const openapi = await documentOf(project, config, { app: { inject }, resolved })
    const tools = mcp ? await toolsOf(inject, mcp) : []
    const toolOf = new Map(tools.map((tool) => [String(tool.title ?? ''), String(tool.name)]))
    const actions: Record<string, ContractAction> = {}
    for (const entry of resolved.engine.table.entries) {
      const key = `${entry.serviceName}.${entry.action.name}`
      actions[key] = describeAction(entry, schemas[entry.serviceName]?.[entry.action.name], routeOf(entry, rest), toolOf.get(key) ?? null)
    }
    return sortKeys({ contract: CONTRACT_VERSION, endpoint: `POST ${endpoint}`, mcp, actions, openapi, tools }) as Contract
  } finally {
    await server.close()
  }
}

function describeAction(entry: TableEntry, schema: any, route: string, tool: string | null): ContractAction {
  const { action } = entry
  const stream = schema?.stream === true
  return {
    service: entry.serviceName,
    action: action.name,
    description: action.description ?? '',
    visible: entry.visible,
    stream,
    upload: Boolean(action.isSpecial),
    auth: { protected: action.isProtected === true, accessControl: [...(action.accessControl ?? [])].sort() },
    route: entry.visible && route !== '-' ? route : null,
    tool,
    input: schema?.input ?? null,
    output: stream ? null : (schema?.output ?? null),
    events: stream ? (schema?.output ?? null) : null,
    errors: schema?.errors ?? {},
    deprecated: action.deprecated ? { ...action.deprecated } : null,
  }
}

/** The snapshot's text: two-space JSON, keys sorted, one newline at the end. */
export function contractText(contract: Contract): string {
  return JSON.stringify(sortKeys(contract), null, 2) + '\n'
}

export async function run(values: Values): Promise<void> {
  const project = openProject(values)
  const contract = await buildContract(project)
  const out = typeof values.out === 'string' ? values.out : CONTRACT_FILE
  if (out === '-') {
    process.stdout.write(contractText(contract))
    return
  }
  await writeFile(typeof values.out === 'string' ? resolve(out) : join(project.root, out), contractText(contract))
  process.stderr.write(`Contract of ${Object.keys(contract.actions).length} actions written to ${out}\n`)
}
