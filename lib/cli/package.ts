/** What every command shares: the parsed option values, and this package's own root and version. */
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CliError } from './errors.js'

/** A command's parsed options (`util.parseArgs` values). */
export type Values = Record<string, string | boolean | undefined>

/** This package's root and version: the nearest package.json above this file named fastify-actions. */
export function ownPackage(): { root: string; version: string } {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string }
      if (manifest.name === 'fastify-actions' && manifest.version) return { root: dir, version: manifest.version }
    } catch {
      // none here: one level up
    }
    const parent = dirname(dir)
    if (parent === dir) throw new CliError('cannot find the package.json of fastify-actions')
    dir = parent
  }
}
