import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import Type from 'typebox'
import { Compile } from 'typebox/compile'
import { UploadedFile, UploadedFiles } from '../../lib/index.js'
import { buildClientModule } from '../../example/client-module.js'

// lib/client stays a browser module: nothing imported at run time from outside lib/client, and the
// bundle esbuild makes for a browser holds no Node built-in import (a path upload imports node:fs lazily).

const clientDir = fileURLToPath(new URL('../../lib/client/', import.meta.url))

t.test('lib/client imports nothing at run time from outside lib/client', async (t) => {
  const runtimeImports: string[] = []
  for (const file of readdirSync(clientDir).filter((name) => name.endsWith('.ts'))) {
    const source = readFileSync(join(clientDir, file), 'utf8')
    // `import x from`, `import { x } from`, `export { x } from`, `export * from` (type-only forms excluded).
    for (const match of source.matchAll(/^(?:import|export)\s+(?!type\b)[^'"]*?from\s+['"]([^'"]+)['"]/gm)) {
      const clause = match[0]
      if (/^(?:import|export)\s*\{[^}]*\}/.test(clause) && /\{\s*(?:type\s+\w+\s*,?\s*)+\}/.test(clause)) continue
      runtimeImports.push(`${file}: ${match[1]}`)
    }
  }
  t.ok(runtimeImports.length > 0, 'the scan sees the runtime imports')
  t.same(runtimeImports.filter((entry) => !/: \.\/[\w-]+\.js$/.test(entry)), [], 'only ./*.js siblings')
})

t.test('the browser bundle has no Node built-in import and no server code', async (t) => {
  const bundle = await buildClientModule()
  t.notMatch(bundle, /^\s*import\s[^;]*from\s*["']node:/m, 'no static node: import')
  t.notMatch(bundle, /fastify|typebox|drizzle/i, 'no server module inside')
  t.match(bundle, /import\(\s*\/\*[^]*?\*\/\s*\/\*[^]*?\*\/\s*specifier\s*\)/, 'the path reader keeps its lazy import')
  // 20 KB until round 5; resume ids, idempotency keys with their retry and StreamError narrowing added ~1.5 KB;
  // resuming a resumable stream after a drop ~3.2 KB (1.7 KB minified, 0.6 KB gzipped: 12.4 KB and 5.1 KB in all).
  t.ok(bundle.length < 26_000, `small: ${bundle.length} bytes`)
})

t.test('UploadedFile: a File passes, anything else is "must be an uploaded file"', async (t) => {
  const check = Compile(Type.Object({ one: UploadedFile, many: UploadedFiles }))
  const file = new File(['x'], 'x.txt', { type: 'text/plain' })
  t.ok(check.Check({ one: file, many: file }))
  t.ok(check.Check({ one: file, many: [file, file] }))
  for (const bad of [{ one: 'x.txt', many: file }, { one: { name: 'x', size: 1, type: '' }, many: file }, { one: new Blob(['x']), many: file }]) {
    t.notOk(check.Check(bad))
    t.same([...check.Errors(bad)].map((error) => [error.instancePath, error.message]), [['/one', 'must be an uploaded file']])
  }
  t.notOk(check.Check({ one: file, many: [] }), 'an empty list is no file')
  t.same(JSON.parse(JSON.stringify(UploadedFile)), { title: 'UploadedFile', description: 'A file part of a multipart/form-data upload' }, 'JSON Schema: annotations only')
})
