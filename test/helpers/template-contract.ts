/**
 * The template's project as `new` writes it (with or without --auth), set up to run the CLI from this
 * repository: its node_modules/fastify-actions points at lib/, the rest resolves from the
 * repository's node_modules (the folder is made under it). `npm run template:contract` writes
 * template/project/contract.json and template/auth/contract.json from it; test/template-contract.test.ts
 * checks they are current.
 */
import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { writeProject } from '../../lib/cli/new.js'
import { repoRoot } from './pack.js'

/** The name the project is written with; the template's snapshots say `{{name}}` in its place. */
export const TEMPLATE_NAME = 'template-contract-project'

export async function templateProject(dir: string, auth: boolean): Promise<string> {
  const root = join(dir, TEMPLATE_NAME)
  await writeProject(root, { name: TEMPLATE_NAME, spec: '*', auth })
  const shim = join(root, 'node_modules', 'fastify-actions')
  mkdirSync(shim, { recursive: true })
  writeFileSync(join(shim, 'package.json'), JSON.stringify({ name: 'fastify-actions', type: 'module', exports: { '.': './index.js' } }))
  writeFileSync(join(shim, 'index.js'), `export * from ${JSON.stringify(pathToFileURL(join(repoRoot, 'lib', 'index.ts')).href)}\n`)
  return root
}

/** Runs the repository's CLI in `cwd` (PGlite in memory: nothing is written to the project's data folder). */
export function runCli(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const env = { ...process.env, NODE_OPTIONS: '', PGLITE_DIR: 'memory://', NODE_ENV: 'development' }
    execFile(process.execPath, ['--import', 'tsx', join(repoRoot, 'lib', 'cli', 'bin.ts'), ...args], { cwd, env }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr })
    })
  })
}

/** The template's snapshot for one layer, with the project's name where the template has `{{name}}`. */
export function templateSnapshot(auth: boolean): string {
  return readFileSync(join(repoRoot, 'template', auth ? 'auth' : 'project', 'contract.json'), 'utf8').replaceAll('{{name}}', TEMPLATE_NAME)
}

// `npm run template:contract`: writes both snapshots.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const dir = join(repoRoot, '.tap', `template-contract-${process.pid}`)
  try {
    for (const auth of [false, true]) {
      const root = await templateProject(join(dir, auth ? 'auth' : 'plain'), auth)
      const result = await runCli(['contract', '--out', '-'], root)
      if (result.code !== 0) throw new Error(result.stderr)
      writeFileSync(join(repoRoot, 'template', auth ? 'auth' : 'project', 'contract.json'), result.stdout.replaceAll(TEMPLATE_NAME, '{{name}}'))
      console.log(`template/${auth ? 'auth' : 'project'}/contract.json written`)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
