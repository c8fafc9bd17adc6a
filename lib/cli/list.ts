/** `fastify-actions list`: the project's services and actions as a table, read from its config. */
import { consoleToStderr } from './console.js'
import type { Values } from './package.js'
import { findProjectRoot, loadConfig } from './project.js'

interface ListedAction {
  name: string
  isProtected?: boolean
  isSpecial?: unknown
  output?: unknown
  visibility?: { rest?: boolean }
}

/** `POST {baseUrl}/services`: the one endpoint. */
export function endpointOf(config: Record<string, any>): string {
  const baseUrl = typeof config.rest?.baseUrl === 'string' ? config.rest.baseUrl : ''
  return `POST ${baseUrl}/services`
}

/**
 * The route an action answers on: its own when the config serves per-action routes (the OpenAPI
 * document, or `rest.openapi.actionRoutes`), the one endpoint otherwise, `-` when hidden from REST.
 */
export function actionRoute(config: Record<string, any>, service: string, action: ListedAction): string {
  const rest = config.rest as Record<string, any> | undefined
  if (rest === undefined || action.visibility?.rest === false) return '-'
  const routes = rest.openapi?.enabled === true || rest.openapi?.actionRoutes === true
  const baseUrl = typeof rest.baseUrl === 'string' ? rest.baseUrl : ''
  return routes ? `POST ${baseUrl}/services/${encodeURIComponent(service)}/${encodeURIComponent(action.name)}` : endpointOf(config)
}

/** The rows of the table: one per action. */
export function actionRows(config: Record<string, any>): string[][] {
  const rows: string[][] = []
  for (const service of config.services as Array<{ name: string; actions: ListedAction[] }>) {
    for (const action of service.actions) {
      rows.push([service.name, action.name, action.isProtected ? 'yes' : 'no', action.isSpecial ? 'yes' : 'no', action.output !== undefined ? 'yes' : 'no', actionRoute(config, service.name, action)])
    }
  }
  return rows
}

/** A plain text table, columns padded to their widest cell. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)))
  const line = (cells: string[]) => cells.map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]))).join('  ')
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n')
}

export async function run(values: Values): Promise<void> {
  const root = findProjectRoot()
  consoleToStderr()
  const config = await loadConfig(root, values.config as string | undefined)
  const table = formatTable(['SERVICE', 'ACTION', 'PROTECTED', 'UPLOAD', 'OUTPUT SCHEMA', 'ROUTE'], actionRows(config))
  process.stdout.write(table + '\n')
}
