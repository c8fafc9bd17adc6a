/**
 * A project for `fastify-actions mcp` (test/cli-mcp-process.test.ts, test/mcp-inspector.test.ts): its
 * `fastify-actions` is this repository's source and its `tsx` this repository's; `tasks.count` streams
 * 13 events, `tasks.list` answers at once. `extra` is appended to the config's object.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Test } from 'tap'

const repoRoot = resolve(import.meta.dirname, '..', '..')

export function mcpProject(t: Test, extra = ''): string {
  const dir = t.testdir({
    'package.json': JSON.stringify({ name: 'fixture', type: 'module', dependencies: { 'fastify-actions': '*' } }),
    src: {
      'config.ts': `import { createAction, createService, Ok } from 'fastify-actions'
const count = createAction({
  name: 'count',
  description: 'Yields { n } from 1 to 13, returns how many',
  handler: async function* () {
    for (let n = 1; n <= 13; n++) {
      yield { n }
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
    return { counted: 13 }
  },
})
const list = createAction({ name: 'list', description: 'Lists', handler: () => Ok({ items: [] }) })
export default {
  serverName: 'fixture',
  services: [createService({ name: 'tasks', description: 'Tasks', actions: [count, list] })],
  rest: { baseUrl: '/api', allowedOrigins: [] },${extra}
}
`,
    },
  })
  return linkOwnSources(dir)
}

/** Makes `dir`'s `fastify-actions` this repository's source (through its `tsx`); returns `dir`. */
export function linkOwnSources(dir: string): string {
  const modules = join(dir, 'node_modules')
  mkdirSync(join(modules, 'fastify-actions'), { recursive: true })
  writeFileSync(join(modules, 'fastify-actions', 'package.json'), JSON.stringify({ name: 'fastify-actions', type: 'module', exports: { '.': './index.ts' } }))
  writeFileSync(join(modules, 'fastify-actions', 'index.ts'), `export * from ${JSON.stringify(join(repoRoot, 'lib/index.ts'))}\n`)
  symlinkSync(join(repoRoot, 'node_modules', 'tsx'), join(modules, 'tsx'))
  return dir
}

