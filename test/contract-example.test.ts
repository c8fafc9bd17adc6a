/** `fastify-actions diff` on the example app against its own snapshot (what `npm run contract:check` runs). */
import t from 'tap'
import { cli } from './helpers/contract-fixture.js'
import { repoRoot } from './helpers/pack.js'

t.setTimeout(300_000)

t.test("the example app against its own snapshot: nothing breaks (npm run contract:check)", async (t) => {
  t.setTimeout(240_000)
  const result = await cli(['diff', '--config', 'example/contract.config.ts', '--against', 'example/contract.json', '--json'], repoRoot)
  t.equal(result.code, 0, result.stderr + result.stdout.slice(0, 2000))
  const report = JSON.parse(result.stdout)
  t.equal(report.breaking, false)
  t.equal(report.against, 'example/contract.json')
})
