/**
 * `tsc --noEmit -p .` (the repository's type-check, `npm run typecheck`) as one test file of the
 * suite: it runs beside the other files instead of before them, so the second core is not idle for
 * the minute it takes. The name sorts first (tap runs files in name order): the longest single job
 * starts at once rather than last. CI's repeat runs (Node 24, 26) skip it: the compiler's verdict
 * does not depend on the runtime.
 */
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import t from 'tap'
import { oncePerCi, repoRoot } from './helpers/pack.js'

t.setTimeout(900_000)

t.test('the repository type-checks: lib, plugins, test, example, bench', { skip: oncePerCi }, async (t) => {
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc')
  const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [tsc, '--noEmit', '-p', '.', '--pretty', 'false'], { cwd: repoRoot, env: { ...process.env, NODE_OPTIONS: '' }, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    )
  })
  const errors = result.stdout.split('\n').filter((line) => /error TS\d+/.test(line))
  t.same(errors, [], 'no type error', { stdout: result.stdout.slice(0, 8000) })
  t.equal(result.code, 0, 'tsc exits 0', { stderr: result.stderr })
})
