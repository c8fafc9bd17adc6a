/** What every command shares: the parsed option values, and this package's own root and version. */
import { ownPackage as lookUpOwnPackage, type OwnPackage } from '../own-package.js'
import { CliError } from './errors.js'

/** A command's parsed options (`util.parseArgs` values). */
export type Values = Record<string, string | boolean | undefined>

/** This package's root and version (lib/own-package.ts, the one lookup); a CliError when it cannot be found. */
export function ownPackage(): OwnPackage {
  const found = lookUpOwnPackage()
  if (!found) throw new CliError('cannot find the package.json of fastify-actions')
  return found
}
