/**
 * What type-checking a user's services costs (issue 42): TypeScript compiles
 * test/fixtures/check-cost/services.ts (actions with TypeBox input, output, declared-error and event
 * schemas, at the top level and inside a service) and we count its type instantiations, a number
 * that does not depend on the machine. Inferring `createAction`'s type arguments once walked every
 * branch of TypeBox's `StaticType` (about 1.36 million instantiations and 7 to 12 s of tsc for this
 * file); since `InferInput`/`InferOutputSchema` (lib/validation.ts) hide `Static<S>` behind
 * `infer`, it takes about 16,000.
 */
import { join } from 'node:path'
import t from 'tap'
import ts from 'typescript'
import { oncePerCi } from './helpers/pack.js'

const fixture = join(import.meta.dirname, 'fixtures', 'check-cost', 'services.ts')

/** Ten times what the fixture takes today, a tenth of what it took before. */
const MAX_INSTANTIATIONS = 150_000

t.test('type-checking actions with TypeBox schemas stays cheap', { skip: oncePerCi }, (t) => {
  const program = ts.createProgram([fixture], {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
    noEmit: true,
    types: [],
  })
  // Only the fixture is checked: the library's own files are read for the types it needs.
  const diagnostics = program.getSemanticDiagnostics(program.getSourceFile(fixture))
  t.same(
    diagnostics.map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')),
    [],
    'the fixture type-checks (its @ts-expect-error proves `data` is still typed from the schema)',
  )
  const instantiations = program.getInstantiationCount()
  t.ok(instantiations > 0, 'the compiler counted')
  t.ok(instantiations < MAX_INSTANTIATIONS, `${instantiations} type instantiations (at most ${MAX_INSTANTIATIONS})`)
  t.end()
})
