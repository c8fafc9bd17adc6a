/**
 * The example app's OpenAPI 3.1 document (what `npm start` serves, built in-process) passes the
 * linters people run in CI: Redocly CLI with its `recommended` ruleset and Spectral with
 * `spectral:oas`, with no error and no warning. A copy with the faults issue 41 found (no servers, an
 * operation without security or description) shows that both linters do catch them.
 * The 3.2 document: test/openapi-lint-32.test.ts.
 */
import t from 'tap'
import { Validator } from '@seriousme/openapi-schema-validator'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { exampleApp, redocly, scratch, spectral, summary } from './helpers/example-openapi.js'
import { oncePerCi } from './helpers/pack.js'

t.test("the example app's OpenAPI 3.1 document: Redocly recommended and Spectral spectral:oas find nothing, and do find the faults", { skip: oncePerCi }, async (t) => {
  const { document } = await exampleApp(t)
  t.equal(document.openapi, '3.1.0')
  t.same(await new Validator().validate(document), { valid: true }, 'valid OpenAPI 3.1 (the specification\'s schema)')
  const dir = scratch(t, 'openapi-lint')
  const file = join(dir, 'openapi.json')
  writeFileSync(file, JSON.stringify(document, null, 2))
  const broken = structuredClone(document)
  delete broken.servers
  delete broken.paths['/api/services/greetings/hello'].post.security
  delete broken.paths['/api/services/greetings/hello'].post.description
  const control = join(dir, 'broken.json')
  writeFileSync(control, JSON.stringify(broken))

  const [report, results, brokenReport, brokenResults] = await Promise.all([redocly(file), spectral(dir, file), redocly(control), spectral(dir, control)])
  t.same(summary(report.problems), [], 'Redocly: no problem')
  t.same(report.totals, { errors: 0, warnings: 0, ignored: 0 })
  t.same(summary(results), [], 'Spectral: no error, warning, information or hint')

  t.same(brokenReport.problems.map((problem) => `${problem.severity} ${problem.ruleId}`).sort(), ['error no-empty-servers', 'error security-defined'], 'Redocly flags the control')
  t.same(brokenResults.map((result) => `${result.severity} ${result.code}`).sort(), ['1 oas3-api-servers', '1 operation-description'], 'Spectral flags the control')
})
