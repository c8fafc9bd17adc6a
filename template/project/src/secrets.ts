// The secrets the server reads from the environment. In production each must be set, at least 32
// bytes, and not a placeholder from a sample file: anyone can sign tokens with a published one.
// Make one with `openssl rand -base64 32` or
// `node -e "console.log(require('node:crypto').randomBytes(32).toString('base64url'))"`.

import { SettingError } from './settings.js'

const MIN_BYTES = 32
const PLACEHOLDER = /change-?me|replace-?me|your-?(jwt-?)?secret|^(secret|jwt-?secret|my-?secret|super-?secret|password|test|example)$/

/** What is wrong with `value` as a production secret, or undefined when it will do. */
export function secretProblem(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return 'is not set'
  if (PLACEHOLDER.test(value.trim().toLowerCase().replace(/[\s_]+/g, '-'))) return 'is a published placeholder'
  const bytes = Buffer.byteLength(value)
  if (bytes < MIN_BYTES) return `is ${bytes} bytes, at least ${MIN_BYTES} needed`
  return undefined
}

/** Throws one line naming every secret in `names` that will not do (production only: the caller decides). */
export function requireSecrets(env: Record<string, string | undefined>, names: readonly string[]): void {
  const problems = names.flatMap((name) => {
    const problem = secretProblem(env[name])
    return problem ? [`${name} ${problem}`] : []
  })
  if (problems.length > 0) {
    throw new SettingError(`NODE_ENV=production: ${problems.join('; ')} (make one with: openssl rand -base64 32)`)
  }
}
