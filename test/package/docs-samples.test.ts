/**
 * Every ```ts sample of README.md and docs/*.md, type-checked with `tsc --strict` as a user's own
 * module in a project where the packed tarball is installed (not against the repo's sources).
 * A sample that is deliberately partial is fenced ```ts nocheck (keep those rare). A sample whose
 * first line starts `// file: name.ts` is written under that name, so a later sample of the same page
 * can import it (`import type { services } from './services.js'`).
 * Also: docs/testing.md's test files run there with `node --test`, and every page's relative links
 * reach files of the repository.
 */
import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { packAndInstall, repoRoot, run } from '../helpers/pack.js'

t.setTimeout(900_000)

interface Sample {
  /** Where it is: `docs/auth.md:42` (the line of the opening fence). */
  where: string
  /** Its path in the samples folder: one folder per page. */
  file: string
  code: string
  nocheck: boolean
}

async function collectSamples(): Promise<Sample[]> {
  const docs = (await readdir(join(repoRoot, 'docs'))).filter((name) => name.endsWith('.md')).sort()
  const pages = ['README.md', ...docs.map((name) => `docs/${name}`)]
  const samples: Sample[] = []
  for (const page of pages) {
    const lines = (await readFile(join(repoRoot, page), 'utf8')).split('\n')
    let open: { start: number; info: string; body: string[] } | undefined
    let fenced = false
    lines.forEach((line, index) => {
      const fence = /^\s*```(.*)$/.exec(line)
      if (!fence) {
        open?.body.push(line)
        return
      }
      if (open) {
        const folder = page.replace(/\.md$/, '').replace(/[^a-z0-9]+/gi, '-')
        const named = /^\/\/ file: ([\w.-]+\.ts)\b/.exec(open.body.find((l) => l.trim() !== '') ?? '')
        const file = `${folder}/${named ? named[1] : `sample-l${open.start}.ts`}`
        samples.push({ where: `${page}:${open.start}`, file, code: open.body.join('\n'), nocheck: /\bnocheck\b/.test(open.info) })
        open = undefined
      } else if (fenced) {
        fenced = false
      } else if (/^(ts|typescript)\b/.test(fence[1]!.trim())) {
        open = { start: index + 1, info: fence[1]!, body: [] }
      } else {
        fenced = true
      }
    })
  }
  return samples
}

/** Bare package names a sample imports (`zod`, `@electric-sql/pglite`, `drizzle-orm/pglite` → `drizzle-orm`); `Buffer.from('…')` is not an import. */
function importedPackages(code: string): string[] {
  const names = new Set<string>()
  // `from 'x'`, `import 'x'`, `import('x')`; not `Buffer.from('x')`.
  for (const match of code.matchAll(/(?<![.\w$])(?:from\s+|import\s+|import\s*\(\s*)['"]([^'"]+)['"]/g)) {
    const spec = match[1]!
    if (spec.startsWith('node:') || !/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(\/|$)/i.test(spec)) continue
    names.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!)
  }
  return [...names]
}

/** `file(line,col): error TSnnnn: message` lines of tsc (continuation lines joined), by sample, with docs line numbers. */
function parseErrors(stdout: string, samples: Sample[]): Map<string, string[]> {
  const errors = new Map<string, string[]>()
  let last: string[] | undefined
  for (const line of stdout.split('\n')) {
    const match = /^(\S+\.ts)\((\d+),\d+\): (error TS\d+: .*)$/.exec(line)
    if (match) {
      const sample = samples.find((s) => s.file === match[1])
      const key = sample ? sample.where : match[1]!
      const [page, fence] = (sample?.where ?? `${match[1]}:0`).split(':')
      last = errors.get(key) ?? []
      last.push(`${page}:${Number(fence) + Number(match[2])}: ${match[3]}`)
      errors.set(key, last)
    } else if (last && /^\s/.test(line) && line.trim()) {
      last[last.length - 1] += ` ${line.trim()}`
    }
  }
  return errors
}

/** Type packages for imports that ship none. */
const typesFor: Record<string, string> = { pg: '@types/pg' }

t.test('every docs sample type-checks against the packed declarations', async (t) => {
  const packed = await packAndInstall().catch((error: Error) => {
    console.error(error.message) // the failing command's output, which tap's report would cut
    throw error
  })
  const samples = await collectSamples()
  const checked = samples.filter((s) => !s.nocheck)
  t.ok(checked.length >= 10, `${checked.length} samples to check (${samples.length - checked.length} marked nocheck)`)

  // The samples live in their own folder of the user's project: packages a page asks the reader to
  // install (zod, PGlite, ioredis, …) go there, so the main project keeps proving that none of
  // them comes with fastify-actions.
  const dir = join(packed.project, 'samples')
  await mkdir(dir, { recursive: true })
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'docs-samples', private: true, type: 'module' }, null, 2) + '\n')
  const wanted = new Set<string>()
  for (const sample of checked) {
    for (const name of importedPackages(sample.code)) {
      if (existsSync(join(packed.project, 'node_modules', name, 'package.json'))) continue
      wanted.add(name)
      if (typesFor[name]) wanted.add(typesFor[name])
    }
  }
  const missing = [...wanted].filter((name) => !existsSync(join(dir, 'node_modules', name, 'package.json'))).sort()
  if (missing.length > 0) {
    const install = await run('npm', ['install', ...missing], { cwd: dir })
    t.equal(install.code, 0, `installed what the pages import: ${missing.join(', ')}`, { stderr: install.stderr })
  }

  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name.endsWith('.ts') || (entry.isDirectory() && entry.name !== 'node_modules')) await rm(join(dir, entry.name), { recursive: true })
  }
  for (const sample of checked) {
    await mkdir(join(dir, dirname(sample.file)), { recursive: true })
    await writeFile(join(dir, sample.file), `${sample.code}\n\nexport {}\n`)
  }
  await writeFile(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2023', 'DOM', 'DOM.Iterable'],
        types: ['node'],
        strict: true,
        noEmit: true,
        // The declarations themselves are checked with skipLibCheck off in pack.test.ts.
        skipLibCheck: true,
      },
      include: ['*/*.ts'],
    }),
  )
  const tsc = join(packed.project, 'node_modules', 'typescript', 'bin', 'tsc')
  const errors = new Map<string, string[]>()
  // tsc reports only syntax errors while any file has one: set such samples aside and check the rest.
  for (let round = 0; round < 5; round++) {
    const result = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: dir, timeout: 300_000 })
    t.ok(result.code === 0 || /error TS\d+/.test(result.stdout), 'tsc ran to the end', { code: result.code, stderr: result.stderr })
    const found = parseErrors(result.stdout, checked)
    for (const [key, lines] of found) errors.set(key, lines)
    const syntax = checked.filter((s) => found.get(s.where)?.some((line) => /error TS1\d{3}:/.test(line)))
    if (syntax.length === 0) break
    for (const sample of syntax) await rm(join(dir, sample.file))
  }
  for (const sample of checked) t.same(errors.get(sample.where) ?? [], [], `${sample.where} type-checks`)
  const elsewhere = [...errors.keys()].filter((key) => !checked.some((s) => s.where === key))
  t.same(elsewhere, [], 'no error outside the samples')
  t.comment(`${checked.length} samples checked, ${errors.size} failing`)
})

t.test('the pages stand alone: relative links reach files that exist, no merge conflict is left', async (t) => {
  const docs = (await readdir(join(repoRoot, 'docs'))).filter((name) => name.endsWith('.md')).sort()
  const pages = ['README.md', ...docs.map((name) => `docs/${name}`)]
  const broken: string[] = []
  const conflicts: string[] = []
  for (const page of pages) {
    const text = await readFile(join(repoRoot, page), 'utf8')
    text.split('\n').forEach((line, index) => {
      if (/^(<{7}|>{7}) /.test(line)) conflicts.push(`${page}:${index + 1}`)
    })
    for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1]!.split('#')[0]!
      if (!target || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue // a URL or an anchor on the same page
      if (!existsSync(join(repoRoot, page.includes('/') ? 'docs' : '', target))) broken.push(`${page}: ${match[1]}`)
    }
  }
  t.same(conflicts, [], 'no conflict markers')
  t.same(broken, [], 'every relative link reaches a file of the repository')
})

t.test("docs/testing.md's test files pass in the user's project", async (t) => {
  const packed = await packAndInstall()
  const page = (await collectSamples()).filter((s) => s.where.startsWith('docs/testing.md:') && !s.nocheck)
  t.ok(page.length >= 2, `${page.length} test files on the page`)
  const dir = join(packed.project, 'testing-md')
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir, { recursive: true })
  const files = page.map((sample, i) => `sample-${i + 1}.test.ts`)
  for (const [i, sample] of page.entries()) await writeFile(join(dir, files[i]!), sample.code)
  // Node 20 runs no TypeScript by itself: the repo's tsx strips the types, the imports resolve in the user's project.
  const tsx = join(repoRoot, 'node_modules', 'tsx', 'dist', 'loader.mjs')
  const result = await run(process.execPath, ['--import', pathToFileURL(tsx).href, '--test', '--test-reporter=tap', ...files], { cwd: dir, timeout: 120_000 })
  t.equal(result.code, 0, 'node --test passes', { stdout: result.stdout.slice(-4000), stderr: result.stderr.slice(-2000) })
  t.match(result.stdout, /# fail 0/)
  t.match(result.stdout, new RegExp(`# pass ${String(result.stdout.match(/# tests (\d+)/)?.[1] ?? 'x')}\\b`), 'every test passed')
})
