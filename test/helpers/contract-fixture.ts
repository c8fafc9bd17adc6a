/**
 * A fixture project for `fastify-actions contract` and `diff` (its own node_modules/fastify-actions
 * points at this repository's lib/), and the CLI run as a process in it.
 */
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Test } from 'tap'
import { repoRoot } from './pack.js'

const bin = join(repoRoot, 'lib', 'cli', 'bin.ts')

export function cli(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', bin, ...args], { cwd, env: { ...process.env, NODE_OPTIONS: '' } }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr })
    })
  })
}

const config = `import { services } from './services.js'

export default {
  serverName: 'fixture',
  services,
  rest: { baseUrl: '/api', allowedOrigins: [], openapi: { enabled: true }, mcp: { enabled: true } },
}
`

/** Version 1 of the fixture's actions; version 2 narrows an input, adds an output field and a declared error, removes the action past its sunset. */
export const services = (v2: boolean) => `import Type from 'typebox'
import { createAction, createService, Fail, Ok } from 'fastify-actions'

const create = createAction({
  name: 'create',
  description: 'Creates a task',
  validation: Type.Object({ title: Type.String({ maxLength: ${v2 ? 100 : 200} }) }),
  output: Type.Object({ id: Type.String(), title: Type.String()${v2 ? ', due: Type.String()' : ''} }),
  errors: { NOT_FOUND: { status: 404, data: Type.Object({ id: Type.String() }) }${v2 ? ', LOCKED: { status: 423 }' : ''} },
  handler: (data) => (data.title ? Ok({ id: '1', title: data.title${v2 ? ", due: ''" : ''} }) : Fail('NOT_FOUND', { id: '1' })),
})
const old = createAction({ name: 'old', description: 'The old way', deprecated: { since: '2020-01-01', sunset: '2020-06-01', replacement: 'tasks.create' }, handler: () => Ok({}) })
const watch = createAction({
  name: 'watch',
  description: 'Watches tasks',
  output: Type.Object({ n: Type.Integer() }),
  async *handler() {
    yield { n: 1 }
  },
})

export const services = [createService({ name: 'tasks', description: 'Tasks', actions: [create, ${v2 ? '' : 'old, '}watch] })]
`

/** The files of the fixture project (for `t.testdir`), at version 1. */
export function fixtureProject(): NonNullable<Parameters<Test['testdir']>[0]> {
  return {
    'package.json': JSON.stringify({ name: 'fixture', private: true, type: 'module', dependencies: { 'fastify-actions': '*' } }),
    node_modules: {
      'fastify-actions': {
        'package.json': JSON.stringify({ name: 'fastify-actions', type: 'module', exports: { '.': './index.js' } }),
        'index.js': `export * from ${JSON.stringify(pathToFileURL(join(repoRoot, 'lib', 'index.ts')).href)}\n`,
      },
    },
    src: { 'config.ts': config, 'services.ts': services(false) },
  }
}
