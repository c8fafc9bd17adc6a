/**
 * A project's config module compiled once and kept: its TypeScript sources (the config and every
 * module of the project it imports, packages left to Node) bundled by the esbuild that the project's
 * own tsx uses, into `node_modules/.cache/fastify-actions/`. A later start whose sources have not
 * changed (same size and modification time) imports the kept bundle as plain JavaScript: no tsx
 * hooks on any module the process loads, no esbuild. `fastify-actions mcp` loads its config this way.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

/** What is kept beside a bundle: the files it was made from, as they were. */
interface Manifest {
  inputs: Array<{ file: string; size: number; mtimeMs: number }>
}

/** The part of esbuild's API this uses. */
interface Esbuild {
  version: string
  build: (options: Record<string, unknown>) => Promise<{ metafile?: { inputs: Record<string, unknown> } }>
}

/** The folder of the kept bundles of a project. */
export function cacheDirOf(root: string): string {
  return join(root, 'node_modules', '.cache', 'fastify-actions')
}

/** True when every input still has the size and modification time it had when the bundle was made. */
function unchanged(manifest: Manifest): boolean {
  try {
    return manifest.inputs.every((input) => {
      const stat = statSync(input.file)
      return stat.size === input.size && stat.mtimeMs === input.mtimeMs
    })
  } catch {
    return false
  }
}

function readManifest(file: string): Manifest | undefined {
  try {
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as Manifest
    return Array.isArray(manifest.inputs) ? manifest : undefined
  } catch {
    return undefined
  }
}

/**
 * A bundle keeps a module's own `import.meta.url`, `import.meta.dirname` and `import.meta.filename`
 * (a migrations folder found next to a source file): each is replaced, in that file, by its original value.
 */
function keepImportMeta(): Record<string, unknown> {
  return {
    name: 'keep-import-meta',
    setup(build: { onLoad: (filter: { filter: RegExp }, load: (args: { path: string }) => { contents: string; loader: string } | undefined) => void }) {
      build.onLoad({ filter: /\.(m|c)?tsx?$/ }, (args) => {
        const source = readFileSync(args.path, 'utf8')
        if (!source.includes('import.meta')) return undefined
        const contents = source
          .replace(/\bimport\.meta\.url\b/g, JSON.stringify(pathToFileURL(args.path).href))
          .replace(/\bimport\.meta\.dirname\b/g, JSON.stringify(resolve(args.path, '..')))
          .replace(/\bimport\.meta\.filename\b/g, JSON.stringify(args.path))
        return { contents, loader: args.path.endsWith('x') ? 'tsx' : 'ts' }
      })
    },
  }
}

/**
 * The URL of the bundle of `file` (the config module of the project at `root`): the kept one when its
 * sources have not changed, else a new one made with `esbuild` (resolved from `resolveFrom`, the
 * project's tsx). `fresh` says whether it was made now.
 */
export async function compiledConfig(root: string, file: string, resolveFrom: string): Promise<{ url: string; fresh: boolean }> {
  const dir = cacheDirOf(root)
  const key = createHash('sha256').update(resolve(file)).digest('hex').slice(0, 16)
  const bundle = join(dir, `config-${key}.mjs`)
  const manifestFile = join(dir, `config-${key}.json`)
  const kept = readManifest(manifestFile)
  if (kept && unchanged(kept)) return { url: pathToFileURL(bundle).href, fresh: false }

  const esbuild = createRequire(resolveFrom)('esbuild') as Esbuild
  mkdirSync(dir, { recursive: true })
  // Written aside, then renamed: two starts at once never import half a bundle.
  const partial = `${bundle}.${process.pid}.tmp`
  const result = await esbuild.build({
    entryPoints: [file],
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node}`,
    packages: 'external',
    metafile: true,
    logLevel: 'silent',
    outfile: partial,
    plugins: [keepImportMeta()],
  })
  const inputs = Object.keys(result.metafile?.inputs ?? {}).map((input) => {
    const path = resolve(root, input)
    const stat = statSync(path)
    return { file: path, size: stat.size, mtimeMs: stat.mtimeMs }
  })
  renameSync(partial, bundle)
  writeFileSync(manifestFile, JSON.stringify({ esbuild: esbuild.version, inputs }))
  return { url: pathToFileURL(bundle).href, fresh: true }
}
