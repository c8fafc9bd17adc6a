/**
 * Every ```ts sample of README.md and docs/*.md, type-checked with `tsc --strict` as a user's own
 * module in a project where the packed tarball is installed (not against the repo's sources).
 * A sample that is deliberately partial is fenced ```ts nocheck (keep those rare). A sample whose
 * first line starts `// file: name.ts` is written under that name, so a later sample of the same page
 * can import it (`import type { services } from './services.js'`).
 * Also: docs/testing.md's test files run there with `node --test`; every page's relative links
 * reach files of the repository, and README.md's links are absolute (it is the registry's page);
 * docs/getting-started.md runs step by step in its own project: the install of step 1 with the
 * tarball, then at each step the files so far type-checked with the page's tsconfig, the server
 * started, and every command run with its printed output compared.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer as createNetServer } from 'node:net'
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { cleanEnv, oncePerCi, packAndInstall, repoRoot, run } from '../helpers/pack.js'

t.setTimeout(1_800_000)

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

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

/**
 * The samples live in their own folder of the user's project: packages a page asks the reader to
 * install (zod, PGlite, ioredis, …) go there, so the main project keeps proving that none of
 * them comes with fastify-actions. Installs only what is missing (one `npm install` per source state).
 */
async function prepareSamples(t: Tap, project: string, checked: Sample[]): Promise<string> {
  const dir = join(project, 'samples')
  await mkdir(dir, { recursive: true })
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'docs-samples', private: true, type: 'module' }, null, 2) + '\n')
  const wanted = new Set<string>()
  for (const sample of checked) {
    for (const name of importedPackages(sample.code)) {
      if (existsSync(join(project, 'node_modules', name, 'package.json'))) continue
      wanted.add(name)
      if (typesFor[name]) wanted.add(typesFor[name])
    }
  }
  const missing = [...wanted].filter((name) => !existsSync(join(dir, 'node_modules', name, 'package.json'))).sort()
  if (missing.length > 0) {
    const install = await run('npm', ['install', ...missing], { cwd: dir })
    t.equal(install.code, 0, `installed what the pages import: ${missing.join(', ')}`, { stderr: install.stderr })
  }
  return dir
}

t.test('every docs sample type-checks against the packed declarations', { skip: oncePerCi }, async (t) => {
  const packed = await packAndInstall().catch((error: Error) => {
    console.error(error.message) // the failing command's output, which tap's report would cut
    throw error
  })
  const samples = await collectSamples()
  const checked = samples.filter((s) => !s.nocheck)
  t.ok(checked.length >= 10, `${checked.length} samples to check (${samples.length - checked.length} marked nocheck)`)

  const dir = await prepareSamples(t, packed.project, checked)
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
    // Incremental, the build info beside the install (per source state, keyed by file contents): a
    // second run checks again only the samples that changed.
    const result = await run(process.execPath, [tsc, '-p', 'tsconfig.json', '--incremental', '--tsBuildInfoFile', join(packed.project, 'samples.tsbuildinfo')], { cwd: dir, timeout: 300_000 })
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

/** The anchors GitHub gives a page's headings (code blocks aside); a repeated heading gets `-1`, `-2`. */
function headingAnchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  for (const [, heading] of markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6}\s+(.*)$/gm)) {
    const slug = heading!.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').trim().replace(/\s/g, '-')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    anchors.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return anchors
}

t.test('the pages stand alone: relative links reach files that exist, no merge conflict is left', { skip: oncePerCi }, async (t) => {
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

  // `page.md#heading`: the heading exists (GitHub's anchors: lower case, punctuation dropped, spaces to `-`).
  const repoUrl = 'https://github.com/fastify-actions/fastify-actions/blob/main/'
  const badAnchors: string[] = []
  let anchored = 0
  for (const page of pages) {
    const text = await readFile(join(repoRoot, page), 'utf8')
    for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const link = match[1]!.startsWith(repoUrl) ? match[1]!.slice(repoUrl.length - 1) : match[1]!
      if (/^[a-z][a-z0-9+.-]*:/i.test(link) || !link.includes('#')) continue
      const [path, fragment] = link.split('#') as [string, string]
      const file = path === '' ? join(repoRoot, page) : path.startsWith('/') ? join(repoRoot, path) : join(repoRoot, dirname(page), path)
      if (!file.endsWith('.md') || !existsSync(file)) continue
      anchored++
      if (!headingAnchors(await readFile(file, 'utf8')).has(fragment)) badAnchors.push(`${page}: ${match[1]}`)
    }
  }
  t.ok(anchored >= 50, `${anchored} links to a heading`)
  t.same(badAnchors, [], 'every link to a heading reaches one')
  // README.md is the package's page on the registry, where a relative link leads nowhere.
  const readme = await readFile(join(repoRoot, 'README.md'), 'utf8')
  const relative = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((target) => !/^(https:\/\/|#)/.test(target))
  t.same(relative, [], 'README.md links are absolute https:// links (they work from the npm registry page)')
  // The registry page opens with what a user (not a clone) runs: the first commands make a project.
  const firstCommands = /```sh\n([\s\S]*?)```/.exec(readme)?.[1]?.split('\n').map((line) => line.replace(/\s+#.*$/, '').trim()).filter(Boolean)
  t.same(firstCommands, ['npx fastify-actions new my-app', 'cd my-app && npm start', 'npm test'], "README.md's first commands are the quick start (docs/cli.md)")
  for (const [, path] of readme.matchAll(/\]\(https:\/\/github\.com\/fastify-actions\/fastify-actions\/blob\/main\/([^)#\s]+)/g)) {
    t.ok(existsSync(join(repoRoot, path!)), `README.md links ${path}, a file of the repository`)
  }
})

t.test("the test files of docs/testing.md and docs/guides.md pass in the user's project", async (t) => {
  const packed = await packAndInstall()
  // testing.md's files, and the test file of guides.md's "Test your actions".
  const page = (await collectSamples()).filter((s) => !s.nocheck && (s.where.startsWith('docs/testing.md:') || (s.where.startsWith('docs/guides.md:') && s.code.includes("from 'node:test'"))))
  t.ok(page.length >= 3, `${page.length} test files on the pages`)
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

/** One `## ` section of docs/getting-started.md: the files it writes and the commands it runs, with their printed output. */
interface TutorialStep {
  title: string
  files: Array<{ name: string; code: string }>
  /** `# …` lines after a command are what it prints; `…` stands for anything (an id, a time). */
  commands: Array<{ command: string; expected: string[] }>
  json: string[]
}

function tutorialSteps(markdown: string): TutorialStep[] {
  return markdown.split(/^## /m).slice(1).map((section) => {
    const step: TutorialStep = { title: section.split('\n')[0]!, files: [], commands: [], json: [] }
    for (const [, info, body] of section.matchAll(/^```(\w*)[^\n]*\n([\s\S]*?)^```$/gm)) {
      if (info === 'ts') {
        const name = /^\/\/ file: ([\w.-]+\.ts)/.exec(body!)?.[1]
        if (name) step.files.push({ name, code: body! })
      } else if (info === 'json') {
        step.json.push(body!)
      } else if (info === 'sh') {
        const lines = body!.replace(/\\\n\s*/g, '').split('\n')
        for (const line of lines) {
          if (line.startsWith('# ')) step.commands.at(-1)?.expected.push(line.slice(2))
          else if (line.trim()) step.commands.push({ command: line.trim(), expected: [] })
        }
      }
    }
    return step
  })
}

/** `…` in a documented output line matches any run of characters. */
const printed = (line: string) => new RegExp(`^${line.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.+?')}$`)

async function freePort(): Promise<number> {
  const probe = createNetServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise((resolve) => probe.close(resolve))
  return port
}

t.test('docs/getting-started.md runs step by step in a project that installed the tarball', async (t) => {
  const packed = await packAndInstall()
  const markdown = await readFile(join(repoRoot, 'docs', 'getting-started.md'), 'utf8')
  const steps = tutorialSteps(markdown)
  t.ok(steps.length >= 5, `${steps.length} steps`)

  // Step 1 as the page writes it, with the packed tarball for `fastify-actions`: one install, kept
  // beside the packed project while the sources do not change. The repo's tsx runs the files;
  // TypeScript is pinned to 5.9, the version the test suite type-checks with.
  const installs = steps[0]!.commands.filter((c) => c.command.startsWith('npm install'))
  t.ok(installs.some((c) => c.command.split(/\s+/).includes('fastify-actions')), 'step 1 installs fastify-actions')
  const commands = installs.map((c) =>
    c.command
      .split(/\s+/)
      .filter((word) => word !== 'tsx')
      .map((word) => (word === 'fastify-actions' ? packed.tarball : word === 'typescript' ? 'typescript@5.9' : word)),
  )
  const project = join(dirname(packed.project), 'getting-started')
  const marker = join(project, 'installed.json')
  if (!existsSync(marker) || (await readFile(marker, 'utf8')) !== JSON.stringify(commands)) {
    await rm(project, { recursive: true, force: true })
    await mkdir(project, { recursive: true })
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'notes-app', private: true, type: 'module' }, null, 2) + '\n')
    for (const [command, ...args] of commands) {
      const result = await run(command!, args, { cwd: project, timeout: 600_000 })
      t.equal(result.code, 0, `${[command, ...args].join(' ')}`, { stderr: result.stderr.slice(-2000) })
      if (result.code !== 0) return
    }
    await writeFile(marker, JSON.stringify(commands))
  }
  const dir = join(project, 'app')
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir, { recursive: true })

  const tsconfig = steps.flatMap((step) => step.json)[0]
  t.ok(tsconfig, 'the page gives a tsconfig.json')
  await writeFile(join(dir, 'tsconfig.json'), tsconfig!)

  const port = await freePort()
  const local = (text: string) => text.replaceAll('localhost:8000', `localhost:${port}`)
  const tsx = pathToFileURL(join(repoRoot, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href
  const tsc = join(project, 'node_modules', 'typescript', 'bin', 'tsc')
  let ran = 0

  // What the reader has after each step type-checks with the page's own tsconfig: every step's files
  // as they stand at that step go to a folder of their own (steps/step-2, steps/step-3, …), and one compiler
  // run checks them all (the declarations are read and the types instantiated once, not once per
  // step). Once per CI run: the compiler's verdict does not depend on the runtime; the servers and
  // commands below do. Incremental, the build info kept beside the install.
  const stepsDir = join(project, 'steps')
  await rm(stepsDir, { recursive: true, force: true })
  const files = new Map<string, string>()
  const folders = new Map<TutorialStep, string>()
  for (const [index, step] of steps.entries()) {
    for (const file of step.files) files.set(file.name, local(file.code))
    if (!step.commands.some((c) => c.command.startsWith('curl ') || c.command === 'npx tsx client.ts')) continue
    const folder = join(stepsDir, `step-${index + 1}`)
    await mkdir(folder, { recursive: true })
    for (const [name, code] of files) await writeFile(join(folder, name), code)
    folders.set(step, folder)
  }
  let checked: Awaited<ReturnType<typeof run>> | undefined
  if (!oncePerCi) {
    await writeFile(join(stepsDir, 'tsconfig.json'), tsconfig!)
    const incremental = ['--incremental', '--tsBuildInfoFile', join(project, 'steps.tsbuildinfo')]
    checked = await run(process.execPath, [tsc, '-p', 'tsconfig.json', '--pretty', 'false', ...incremental], { cwd: stepsDir, timeout: 600_000 })
    t.ok(checked.code === 0 || /error TS\d+/.test(checked.stdout), 'tsc ran to the end', { code: checked.code, stderr: checked.stderr })
    const elsewhere = checked.stdout.split('\n').filter((line) => /error TS\d+/.test(line) && !/^step-\d+[\\/]/.test(line))
    t.same(elsewhere, [], 'no error outside the steps (the tsconfig, a declaration)')
  }

  for (const step of steps) {
    for (const file of step.files) await writeFile(join(dir, file.name), local(file.code))
    const runnable = step.commands.filter((c) => c.command.startsWith('curl ') || c.command === 'npx tsx client.ts')
    if (runnable.length === 0) continue
    await t.test(step.title, async (t) => {
      if (checked) {
        const folder = basename(folders.get(step)!)
        const errors = checked.stdout.split('\n').filter((line) => line.startsWith(`${folder}/`) || line.startsWith(`${folder}\\`))
        t.same(errors, [], 'npx tsc --noEmit passes on the files so far', { stdout: checked.stdout.slice(0, 4000) })
      }

      const server = spawn(process.execPath, ['--import', tsx, 'server.ts'], { cwd: dir, env: { ...cleanEnv(), PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] })
      let output = ''
      server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
      server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
      const exited = new Promise((resolve) => server.once('exit', resolve))
      t.teardown(async () => {
        if (server.exitCode === null) server.kill()
        await exited
      })
      // Listening once a request gets any answer (bounded: 60 s of 100 ms tries).
      let up = false
      for (let i = 0; i < 600 && !up && server.exitCode === null; i++) {
        up = await fetch(`http://localhost:${port}/`).then(() => true, () => false)
        if (!up) await new Promise((resolve) => setTimeout(resolve, 100))
      }
      t.ok(up, 'npx tsx server.ts listens', { output })
      // The URL block is printed once listen has resolved: the first answer can come before its line is read.
      const endpoint = `POST http://localhost:${port}/api/services`
      for (let i = 0; i < 100 && !output.includes(endpoint) && server.exitCode === null; i++) await new Promise((resolve) => setTimeout(resolve, 100))
      t.match(output, endpoint, 'it prints the endpoint')

      for (const { command, expected } of runnable) {
        const result =
          command === 'npx tsx client.ts'
            ? await run(process.execPath, ['--import', tsx, 'client.ts'], { cwd: dir, timeout: 60_000 })
            : await run('sh', ['-c', local(command)], { cwd: dir, timeout: 60_000 })
        t.equal(result.code, 0, `${command.slice(0, 60)}… exits 0`, { stderr: result.stderr })
        const lines = result.stdout.trimEnd().split('\n')
        t.equal(lines.length, expected.length, `${command.slice(0, 60)}… prints ${expected.length} line(s)`, { stdout: result.stdout })
        expected.forEach((line, i) => t.match(lines[i] ?? '', printed(line), `prints ${line}`))
        ran++
      }
    })
  }
  t.ok(ran >= 5, `${ran} commands of the page ran`)
  t.comment(`getting-started path: ${markdown.split(/\s+/).filter(Boolean).length} words`)
})
