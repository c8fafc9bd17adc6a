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

/** The rows of the table: one per action. */
export function actionRows(config: Record<string, any>): string[][] {
  const rest = config.rest as Record<string, any> | undefined
  const baseUrl = typeof rest?.baseUrl === 'string' ? rest.baseUrl : ''
  const routes = rest !== undefined && (rest.openapi?.enabled === true || rest.openapi?.actionRoutes === true)
  const rows: string[][] = []
  for (const service of config.services as Array<{ name: string; actions: ListedAction[] }>) {
    for (const action of service.actions) {
      const visible = rest !== undefined && action.visibility?.rest !== false
      const route = !visible ? '-' : routes ? `POST ${baseUrl}/services/${encodeURIComponent(service.name)}/${encodeURIComponent(action.name)}` : `POST ${baseUrl}/services`
      rows.push([service.name, action.name, action.isProtected ? 'yes' : 'no', action.isSpecial ? 'yes' : 'no', action.output !== undefined ? 'yes' : 'no', route])
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
