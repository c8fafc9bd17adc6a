/**
 * The example app's document with `rest.openapi.version: '3.2'` (its streams' events as `itemSchema`):
 * valid against the OpenAPI 3.2 schema, and clean under Redocly `recommended` and Spectral `spectral:oas`,
 * both of which read 3.2 (docs/openapi.md lists which tools do).
 */
import t from 'tap'
import { Validator } from '@seriousme/openapi-schema-validator'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { exampleApp, redocly, scratch, spectral, summary } from './helpers/example-openapi.js'
import { oncePerCi } from './helpers/pack.js'

t.test("the example app's OpenAPI 3.2 document: Redocly recommended and Spectral spectral:oas find nothing", { skip: oncePerCi }, async (t) => {
  const { document } = await exampleApp(t, { version: '3.2' })
  t.equal(document.openapi, '3.2.0')
  t.ok(document.paths['/api/services/greetings/wave'].post.responses['200'].content['text/event-stream'].itemSchema, 'the stream has an itemSchema')
  t.same(await new Validator().validate(document), { valid: true }, 'valid OpenAPI 3.2 (the specification\'s schema)')
  const dir = scratch(t, 'openapi-lint-32')
  const file = join(dir, 'openapi.json')
  writeFileSync(file, JSON.stringify(document, null, 2))
  const [report, results] = await Promise.all([redocly(file), spectral(dir, file)])
  t.same(summary(report.problems), [], 'Redocly: no problem')
  t.same(report.totals, { errors: 0, warnings: 0, ignored: 0 })
  t.same(summary(results), [], 'Spectral: no error, warning, information or hint')
})
