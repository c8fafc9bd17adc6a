/**
 * Counts the bytes node:zlib's decoders (gunzip, inflate, brotli) hand on, in every module of the
 * process: the functions are swapped on node:zlib's module object and `syncBuiltinESMExports()`
 * hands the swap to every `import { … } from 'node:zlib'`. Import it BEFORE anything that captures
 * those functions at load (plugins/content-encoding.ts keeps them in a table): first in the file.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module'
import type { Transform } from 'node:stream'
import type * as zlib from 'node:zlib'

export const decoded = { bytes: 0 }

const zlibModule = createRequire(import.meta.url)('node:zlib') as typeof zlib
for (const name of ['createGunzip', 'createInflate', 'createBrotliDecompress'] as const) {
  const make = zlibModule[name] as (...args: unknown[]) => Transform
  // Read-only but configurable properties of the module object.
  Object.defineProperty(zlibModule, name, { value: (...args: unknown[]) => make(...args).on('data', (chunk: Buffer) => (decoded.bytes += chunk.length)) })
}
syncBuiltinESMExports()
