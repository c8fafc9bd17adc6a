import { ErrConfig } from './errors.js'

/** Keys of an options object whose own keys are checked too: `true` takes the value as it is (a leaf, an array, an open object). */
export interface KeyRules {
  readonly [key: string]: true | KeyRules
}

/**
 * The keys an options type `T` may have, every one of them listed (a key added to the type and not
 * here fails to compile): how the known-key tables stay in step with the configuration types.
 */
export type KeyTable<T> = { readonly [K in keyof T]-?: true | KeyRules }

/**
 * Refuses a key no option has, at any depth the rules describe, naming the nearest known key
 * (`createServer: rest.baseurl is not an option; did you mean rest.baseUrl?`). Values of the wrong
 * type are left to the resolvers, which name what they expect.
 */
export function checkKnownKeys(value: unknown, rules: KeyRules, path = ''): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return
  for (const key of Object.keys(value)) {
    // `'x-*'` stands for every specification extension (`x-logo`), as OpenAPI allows them.
    const rule = Object.hasOwn(rules, key) ? rules[key] : key.startsWith('x-') && Object.hasOwn(rules, 'x-*') ? rules['x-*'] : undefined
    if (rule === undefined) throw unknownKey(path, key, Object.keys(rules))
    if (rule !== true) checkKnownKeys((value as Record<string, unknown>)[key], rule, `${path}${key}.`)
  }
}

function unknownKey(path: string, key: string, known: string[]): Error {
  const nearest = nearestKey(key, known)
  const hint = nearest === undefined ? ` (${path ? path.slice(0, -1) : 'the configuration'} takes ${known.join(', ')})` : `; did you mean ${path}${nearest}?`
  return new ErrConfig(`createServer: ${path}${key} is not an option${hint}`)
}

/** The known key closest to `key` (case ignored), when it is close enough to be a misspelling. */
export function nearestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Infinity
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase())
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance]
  }
  return bestDistance <= Math.max(1, Math.floor(key.length / 3)) ? best : undefined
}

/** Levenshtein distance with adjacent transpositions (`hsot` is one edit from `host`). */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1)
    }
  }
  return rows[a.length][b.length]
}
