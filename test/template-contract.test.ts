/**
 * The template's committed snapshots (template/project/contract.json, template/auth/contract.json)
 * are those of the project `new` writes, with and without --auth: `fastify-actions diff` in a fresh
 * copy finds no change at all. After a change to the template's actions: `npm run template:contract`.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { runCli, templateProject, templateSnapshot } from './helpers/template-contract.js'

t.setTimeout(600_000)

for (const auth of [false, true]) {
  t.test(`the template's snapshot is current${auth ? ' (--auth)' : ''}`, async (t) => {
    const dir = t.testdir({})
    const root = await templateProject(dir, auth)
    writeFileSync(join(root, 'contract.json'), templateSnapshot(auth))
    const result = await runCli(['diff'], root)
    t.equal(result.code, 0, result.stderr)
    t.equal(result.stdout, 'No changes against contract.json.\n', 'run npm run template:contract after changing the template')
  })
}
