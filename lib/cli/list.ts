/** `fastify-actions list`: the project's services and actions as a table, read from the server it builds (without listening). */
import type { Values } from './package.js'
import { buildProjectServer, openProject, type ResolvedProject, type TableEntry } from './project.js'

/**
 * The route an action answers on, as the server resolved and mounted it: its own when the server
 * serves per-action routes, the one endpoint otherwise, `-` when hidden from REST (or no REST).
 */
export function routeOf(entry: TableEntry, rest: ResolvedProject['config']['rest']): string {
  if (!rest || !entry.visible) return '-'
  return rest.actionRoutes ? `POST ${rest.baseUrl}/${entry.route}` : `POST ${rest.baseUrl}/services`
}

/** The rows of the table, one per action: the routes as the server resolved and mounted them. */
export function actionRows(project: ResolvedProject): string[][] {
  const rest = project.config.rest
  return project.engine.table.entries.map((entry) => {
    const { action } = entry
    return [entry.serviceName, action.name, action.isProtected ? 'yes' : 'no', action.isSpecial ? 'yes' : 'no', action.output !== undefined ? 'yes' : 'no', routeOf(entry, rest)]
  })
}

/** A plain text table, columns padded to their widest cell. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)))
  const line = (cells: string[]) => cells.map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]))).join('  ')
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n')
}

/** The rows of a config without a REST interface: its actions, no route. */
function restlessRows(config: Record<string, unknown>): string[][] {
  const services = config.services as Array<{ name: string; actions: TableAction[] }>
  return services.flatMap((service) => service.actions.map((action) => [service.name, action.name, action.isProtected ? 'yes' : 'no', action.isSpecial ? 'yes' : 'no', action.output !== undefined ? 'yes' : 'no', '-']))
}

type TableAction = ResolvedProject['engine']['table']['entries'][number]['action']

export async function run(values: Values): Promise<void> {
  const project = openProject(values)
  const { root } = project
  const config = await project.config()
  let rows: string[][]
  if (config.rest === undefined) rows = restlessRows(config)
  else {
    // Built as the server builds it (no onBoot, nothing listening), without what needs a live store.
    const { server, resolved } = await buildProjectServer(root, config, (rest) => ({ ...rest, rateLimiting: undefined, enableStatic: false }))
    try {
      rows = actionRows(resolved)
    } finally {
      await server.close()
    }
  }
  const table = formatTable(['SERVICE', 'ACTION', 'PROTECTED', 'UPLOAD', 'OUTPUT SCHEMA', 'ROUTE'], rows)
  process.stdout.write(table + '\n')
}
