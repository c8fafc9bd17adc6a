/** `fastify-actions new <dir>`: copies the project template (placeholders filled in) and installs it. */
import { spawn } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { CliError, usageError } from './errors.js'
import { ownPackage, type Values } from './package.js'
import { checkPackageName } from './names.js'

/** Shipped without their dot (npm pack drops `.gitignore` and other dotfiles), renamed on copy. */
const DOTFILES = new Set(['gitignore', 'dockerignore', 'taprc', 'env.example'])

/** Keeps or drops the lines between `auth:start` and `auth:end` markers (the marker lines always go). */
export function applyAuthBlocks(text: string, auth: boolean): string {
  const out: string[] = []
  let inBlock = false
  for (const line of text.split('\n')) {
    if (line.includes('auth:start')) inBlock = true
    else if (line.includes('auth:end')) inBlock = false
    else if (!inBlock || auth) out.push(line)
  }
  return out.join('\n')
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true })
  return entries.filter((entry) => entry.isFile()).map((entry) => relative(dir, join(entry.parentPath, entry.name)))
}

/** The spec written for fastify-actions: a path given on the command line becomes an absolute `file:` spec. */
function specOf(from: string | undefined, version: string): string {
  if (from === undefined) return `^${version}`
  if (from === '') throw new CliError('--from needs an npm spec: a version range, a tarball or a folder')
  if (/^(\.|\/|~)/.test(from) || from.endsWith('.tgz') || existsSync(from)) {
    const path = resolve(from.replace(/^file:/, ''))
    if (!existsSync(path)) throw new CliError(`--from ${from}: no such file or folder`)
    return `file:${path}`
  }
  return from
}

/** Writes the template into `target`; answers the files written (relative paths). */
export async function writeProject(target: string, options: { name: string; spec: string; auth: boolean }): Promise<string[]> {
  const templateRoot = join(ownPackage().root, 'template')
  const layers = [join(templateRoot, 'project'), ...(options.auth ? [join(templateRoot, 'auth')] : [])]
  const written = new Set<string>()
  for (const layer of layers) {
    for (const file of await filesUnder(layer)) {
      const name = DOTFILES.has(basename(file)) ? join(dirname(file), `.${basename(file)}`) : file
      let text = await readFile(join(layer, file), 'utf8')
      text = applyAuthBlocks(text, options.auth)
        .replaceAll('{{name}}', options.name)
        .replaceAll('{{fastifyActionsSpec}}', JSON.stringify(options.spec).slice(1, -1))
      await mkdir(dirname(join(target, name)), { recursive: true })
      await writeFile(join(target, name), text)
      written.add(name)
    }
  }
  return [...written].sort()
}

function npmInstall(cwd: string): Promise<number | null> {
  return new Promise((resolvePromise, reject) => {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
    const child = spawn(npm, ['install'], { cwd, stdio: ['ignore', 'inherit', 'inherit'] })
    child.once('error', reject)
    child.once('exit', (code) => resolvePromise(code))
  })
}

export async function run(values: Values, positionals: string[]): Promise<void> {
  const [dir, ...extra] = positionals
  // An empty argument (an unset shell variable) is not `.`: it would write into the current folder.
  if (dir === undefined || dir.trim() === '') throw usageError('new needs a directory: fastify-actions new <dir>')
  if (extra.length > 0) throw usageError(`unexpected argument ${JSON.stringify(extra[0])}`)
  const target = resolve(dir)
  if (existsSync(target)) {
    if (!statSync(target).isDirectory() || (await readdir(target)).length > 0) throw new CliError(`${dir} already exists and is not empty`)
  }
  const name = checkPackageName(basename(target))
  const spec = specOf(values.from as string | undefined, ownPackage().version)
  const auth = values.auth === true
  const files = await writeProject(target, { name, spec, auth })
  process.stdout.write(`Created ${name} in ${target} (${files.length} files${auth ? ', with auth' : ''})\n`)
  if (values['no-install'] !== true) {
    process.stdout.write('Installing dependencies (npm install)...\n')
    const code = await npmInstall(target)
    if (code !== 0) throw new CliError(`npm install failed (exit ${code}): the files are written, run npm install in ${dir}`)
  }
  const steps = [`cd ${dir}`, ...(values['no-install'] === true ? ['npm install'] : []), 'npm start', 'npm test']
  process.stdout.write(`\nNext:\n${steps.map((step) => `  ${step}`).join('\n')}\n`)
}
