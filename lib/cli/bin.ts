#!/usr/bin/env node
import module from 'node:module'
import { main, reportError } from './index.js'

// Node 22.1+: V8's compiled code of every module kept on disk between runs (a faster `mcp` start); absent on Node 20.
;(module as { enableCompileCache?: () => unknown }).enableCompileCache?.()

/** Ends the process once stdout is flushed: a loaded project's database may hold handles open. */
function exit(code: number): void {
  process.stdout.write('', () => process.exit(code))
}

main(process.argv.slice(2)).then(
  () => exit(0),
  (error: unknown) => exit(reportError(error)),
)
