/** Names given on the command line: kebab-case or camelCase, turned into camelCase identifiers. */
import { createRequire } from 'node:module'
import { CliError } from './errors.js'

/** npm's own name rules (the package npm and the registry use); it ships no types: its answer, written out. */
const validateNpmName = createRequire(import.meta.url)('validate-npm-package-name') as (name: string) => {
  validForNewPackages: boolean
  errors?: string[]
  warnings?: string[]
}

const NAME = /^[A-Za-z][A-Za-z0-9]*(-[A-Za-z0-9]+)*$/

/** `user-profiles` → `userProfiles`; `userProfiles` stays. */
export function toCamelCase(name: string): string {
  return name.replace(/-([A-Za-z0-9])/g, (_match, letter: string) => letter.toUpperCase())
}

/** `userProfiles` → `UserProfiles`. */
export function toPascalCase(name: string): string {
  const camel = toCamelCase(name)
  return camel.charAt(0).toUpperCase() + camel.slice(1)
}

/** Checks a service or action name (letters, digits, single hyphens, a letter first) and answers its camelCase form. */
export function checkName(kind: 'service' | 'action', name: string): string {
  if (!NAME.test(name) || name.length > 60) {
    throw new CliError(`invalid ${kind} name ${JSON.stringify(name)}: use letters, digits and single hyphens, starting with a letter (e.g. user-profiles)`)
  }
  return toCamelCase(name)
}

/** An npm package name for a new project's folder name (lowercase, no spaces), or an error. */
export function checkPackageName(name: string): string {
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(name) || name.length > 214) {
    throw new CliError(`invalid project name ${JSON.stringify(name)}: the folder name becomes the package name (lowercase letters, digits, ".", "_", "-")`)
  }
  // What npm itself refuses (`node_modules`, `favicon.ico`, core module names such as `http`).
  const verdict = validateNpmName(name)
  if (!verdict.validForNewPackages) {
    const reason = [...(verdict.errors ?? []), ...(verdict.warnings ?? [])][0] ?? 'npm refuses it'
    throw new CliError(`invalid project name ${JSON.stringify(name)}: npm refuses it (${reason})`)
  }
  return name
}
