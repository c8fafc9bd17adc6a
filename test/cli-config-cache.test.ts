/**
 * `fastify-actions mcp` loads the project's config from a bundle kept between starts
 * (lib/cli/config-cache.ts, issue 39 item 7): made once by the esbuild of the project's tsx, reused
 * while no source changed, made again when one did; a module keeps its own `import.meta.url`.
 */
import t from 'tap'
import { readFileSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { cacheDirOf, compiledConfig } from '../lib/cli/config-cache.js'

const tsx = import.meta.resolve('tsx/esm/api')

t.test('made once, reused while the sources are unchanged, made again after a change', async (t) => {
  const root = t.testdir({
    'package.json': '{"name":"fixture","type":"module"}',
    src: {
      'config.ts': "import { folder } from './db/where.js'\nconst port: number = 1\nexport default { services: [], port, folder }\n",
      db: { 'where.ts': "export const folder: string = new URL('./migrations', import.meta.url).href\n" },
    },
  })
  const file = join(root, 'src', 'config.ts')
  const first = await compiledConfig(root, file, tsx)
  t.equal(first.fresh, true, 'made on the first start')
  t.ok(first.url.startsWith(pathToFileURL(cacheDirOf(root)).href), 'kept under node_modules/.cache/fastify-actions')
  const config = (await import(first.url)) as { default: { port: number; folder: string } }
  t.equal(config.default.port, 1)
  t.equal(config.default.folder, pathToFileURL(join(root, 'src', 'db', 'migrations')).href, "import.meta.url is the source file's, not the bundle's")
  t.notMatch(readFileSync(new URL(first.url), 'utf8'), /: number|: string/, 'plain JavaScript')

  const second = await compiledConfig(root, file, tsx)
  t.same(second, { url: first.url, fresh: false }, 'reused: nothing changed')

  // A module the config imports changes: the bundle is made again, with the change.
  const where = join(root, 'src', 'db', 'where.ts')
  writeFileSync(where, "export const folder: string = 'moved'\n")
  utimesSync(where, new Date(), new Date(Date.now() + 5_000))
  const third = await compiledConfig(root, file, tsx)
  t.equal(third.fresh, true, 'made again after a change')
  t.match(readFileSync(new URL(third.url), 'utf8'), /moved/)
})

t.test('a source that does not compile: the error, no bundle kept', async (t) => {
  const root = t.testdir({ 'package.json': '{"name":"fixture","type":"module"}', src: { 'config.ts': 'export default {{{\n' } })
  await t.rejects(compiledConfig(root, join(root, 'src', 'config.ts'), tsx), /Build failed/)
})
