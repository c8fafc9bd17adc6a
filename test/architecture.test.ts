import t from 'tap'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { cruise, type IReporterOutput } from 'dependency-cruiser'

const require = createRequire(import.meta.url)
const ruleSet = require('../.dependency-cruiser.cjs')

/** The rule names broken in `paths` (run from `cwd`). */
async function violations(paths: string[], cwd = process.cwd()): Promise<string[]> {
  const previous = process.cwd()
  process.chdir(cwd)
  try {
    const { output } = (await cruise(paths, { validate: true, ruleSet, ...ruleSet.options })) as IReporterOutput
    if (typeof output === 'string') throw new Error(output)
    return output.summary.violations.map((violation) => `${violation.rule.name}: ${violation.from} → ${violation.to}`)
  } finally {
    process.chdir(previous)
  }
}

t.test('the code keeps the layers: no cycles, no HTTP or ORM in the core, adapters never compose', async (t) => {
  t.same(await violations(['lib', 'plugins']), [])
})

t.test('the rules bite: each forbidden arrow is reported', async (t) => {
  const dir = t.testdir({
    lib: {
      'engine.ts': "import 'drizzle-orm'\nimport '@opentelemetry/api'\nimport { a } from './cycle-a.js'\nexport const engine = a\n",
      'cycle-a.ts': "import { b } from './cycle-b.js'\nexport const a = b\n",
      'cycle-b.ts': "import { a } from './cycle-a.js'\nexport const b = () => a\n",
      'context.ts': "import Fastify from 'fastify'\nimport { plugin } from '../plugins/p.js'\nexport const x = [Fastify, plugin]\n",
      'result.ts': "import createError from '@fastify/error'\nexport const E = createError('X', 'x')\n",
      client: { 'index.ts': "import { engine } from '../engine.js'\nexport const c = engine\n" },
    },
    plugins: { 'p.ts': "import { server } from '../lib/server/compose.js'\nexport const plugin = server\n" },
  })
  mkdirSync(join(dir, 'lib', 'server'))
  writeFileSync(join(dir, 'lib', 'server', 'compose.ts'), 'export const server = 1\n')
  // The fixture resolves packages from this repository's node_modules.
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}')
  writeFileSync(join(dir, 'tsconfig.json'), '{"compilerOptions":{"module":"NodeNext","moduleResolution":"NodeNext"}}')
  const found = await violations(['lib', 'plugins'], dir)
  const rules = new Set(found.map((line) => line.split(':')[0]))
  for (const rule of ['no-circular', 'core-knows-no-http', 'fastify-error-only-in-errors', 'orm-only-in-db', 'otel-only-in-tracing', 'adapters-do-not-compose', 'client-stands-alone']) {
    t.ok(rules.has(rule), `${rule} reported`)
  }
  t.ok(found.some((line) => /^core-knows-no-http: lib\/context\.ts → .*node_modules\/fastify\//.test(line)), 'fastify itself is caught, not only plugins/')
  t.ok(found.some((line) => /^core-knows-no-http: lib\/context\.ts → plugins\/p\.ts$/.test(line)), 'and plugins/')
})
