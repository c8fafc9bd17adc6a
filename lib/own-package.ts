/** fastify-actions' own package.json: read once, for the CLI (`--version`, the template) and the MCP server's identity. */
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** This package's root folder and version. */
export interface OwnPackage {
  readonly root: string
  readonly version: string
}

let found: OwnPackage | null | undefined

/**
 * The nearest package.json above this file named fastify-actions (from the source, the repository's;
 * installed, the package's); undefined when there is none (a bundled copy). Read once.
 */
export function ownPackage(): OwnPackage | undefined {
  if (found === undefined) found = lookUp(dirname(fileURLToPath(import.meta.url)))
  return found ?? undefined
}

function lookUp(start: string): OwnPackage | null {
  for (let dir = start; ; dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown }
      if (manifest.name === 'fastify-actions' && typeof manifest.version === 'string') return Object.freeze({ root: dir, version: manifest.version })
    } catch {
      // none here (or not JSON): one level up
    }
    if (dirname(dir) === dir) return null
  }
}
