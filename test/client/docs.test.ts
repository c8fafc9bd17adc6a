import t from 'tap'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import ts from 'typescript'
import { oncePerCi } from '../helpers/pack.js'

// docs/client.md: every ```ts block that starts with `// file: <name>.ts` is written to a scratch
// folder (the package names pointing at lib/) and type-checked with the repository's tsconfig.

const root = fileURLToPath(new URL('../../', import.meta.url))
const page = readFileSync(join(root, 'docs', 'client.md'), 'utf8')
const blocks = [...page.matchAll(/```ts\n\/\/ file: ([\w.-]+\.ts)\n([^]*?)```/g)].map(([, name, code]) => ({ name, code }))

// A compiler's verdict: .ci/run's Node 24 and 26 runs skip it (test/helpers/pack.ts).
t.test('docs/client.md: the examples type-check', { skip: oncePerCi }, async (t) => {
  t.ok(blocks.length >= 8, `${blocks.length} examples found`)
  const scratch = join(root, 'test', 'client', `.docs-${process.pid}`)
  mkdirSync(scratch, { recursive: true })
  t.teardown(() => rmSync(scratch, { recursive: true, force: true }))
  const files = blocks.map(({ name, code }) => {
    const path = join(scratch, name)
    writeFileSync(
      path,
      code.replaceAll("from 'fastify-actions/client'", "from '../../../lib/client/index.js'").replaceAll("from 'fastify-actions'", "from '../../../lib/index.js'"),
    )
    return path
  })
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })
  if (!config) throw new Error('tsconfig.json could not be read')
  const program = ts.createProgram(files, { ...config.options, noEmit: true })
  const problems = ts
    .getPreEmitDiagnostics(program)
    .map((diagnostic) => {
      const where = diagnostic.file ? `${diagnostic.file.fileName.slice(scratch.length + 1)}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1}` : ''
      return `${where} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`
    })
  t.same(problems, [], 'no type errors')
})
