import { build } from 'esbuild'
import { fileURLToPath } from 'node:url'

const entry = fileURLToPath(new URL('../lib/client/index.ts', import.meta.url))

/**
 * fastify-actions/client as one ES module for the browser, built from its TypeScript source with
 * esbuild (no bundler framework). It has no dependency, so the bundle is the client alone.
 */
export async function buildClientModule(): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  })
  return result.outputFiles[0].text
}
