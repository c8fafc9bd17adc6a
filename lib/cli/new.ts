/** `fastify-actions new <dir>`: copies the project template (placeholders filled in) and installs it. */
import { spawn } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
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

/** A path on the command line (a tarball or a package folder), or undefined for an npm spec (a version range, a tag). */
function localPath(from: string | undefined): string | undefined {
  if (from === undefined) return undefined
  if (from === '') throw new CliError('--from needs an npm spec: a version range, a tarball or a folder')
  if (!(/^(\.|\/|~|file:)/.test(from) || from.endsWith('.tgz') || existsSync(from))) return undefined
  const path = resolve(from.replace(/^file:/, ''))
  if (!existsSync(path)) throw new CliError(`--from ${from}: no such file or folder`)
  return path
}

/**
 * The tarball of a local fastify-actions, inside the project (`<target>/fastify-actions-<version>.tgz`):
 * a tarball is copied, a folder packed (`npm pack`). A `file:` spec pointing outside the project would
 * break the image build (Docker sees the project only) and any other machine.
 */
async function vendorTarball(path: string, target: string): Promise<string> {
  await mkdir(target, { recursive: true })
  if (statSync(path).isFile()) {
    const name = basename(path)
    await copyFile(path, join(target, name))
    return name
  }
  const packed = await npm(['pack', '--silent', '--pack-destination', target], path)
  const name = packed.stdout.trim().split('\n').pop()
  if (packed.code !== 0 || !name || !existsSync(join(target, name))) throw new CliError(`--from ${path}: npm pack failed (exit ${packed.code})`)
  return name
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

/** Runs npm in `cwd`: its exit code, and its stdout when `capture` (else stdout is the terminal's). */
function npm(args: string[], cwd: string, capture = true): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolvePromise, reject) => {
    const command = process.platform === 'win32' ? 'npm.cmd' : 'npm'
    const child = spawn(command, args, { cwd, stdio: ['ignore', capture ? 'pipe' : 'inherit', 'inherit'] })
    let stdout = ''
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.once('error', reject)
    child.once('exit', (code) => resolvePromise({ code, stdout }))
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
  const local = localPath(values.from as string | undefined)
  const spec = local ? `file:${await vendorTarball(local, target)}` : ((values.from as string | undefined) ?? `^${ownPackage().version}`)
  const auth = values.auth === true
  const files = await writeProject(target, { name, spec, auth })
  process.stdout.write(`Created ${name} in ${target} (${files.length} files${auth ? ', with auth' : ''})\n`)
  if (values['no-install'] !== true) {
    process.stdout.write('Installing dependencies (npm install)...\n')
    const { code } = await npm(['install'], target, false)
    if (code !== 0) throw new CliError(`npm install failed (exit ${code}): the files are written, run npm install in ${dir}`)
  }
  const steps = [`cd ${dir}`, ...(values['no-install'] === true ? ['npm install'] : []), 'npm start', 'npm test']
  process.stdout.write(`\nNext:\n${steps.map((step) => `  ${step}`).join('\n')}\n`)
}
