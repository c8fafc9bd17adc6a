#!/usr/bin/env node
import { main, reportError } from './index.js'

/** Ends the process once stdout is flushed: a loaded project's database may hold handles open. */
function exit(code: number): void {
  process.stdout.write('', () => process.exit(code))
}

main(process.argv.slice(2)).then(
  () => exit(0),
  (error: unknown) => exit(reportError(error)),
)
