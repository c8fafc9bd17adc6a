/**
 * The process `cliProcess()` (test/helpers/cli-runner.ts) starts: it runs command lines one at a
 * time, each as lib/cli/bin.ts does (`main(args)` in `cwd`, exit code 0 or `reportError`'s), and
 * answers with what the command wrote to stdout and stderr. Messages: `{ id, args, cwd }`.
 */
import { main, reportError } from '../../lib/cli/index.js'
import type { CliRun } from './cli-runner.js'

type Write = typeof process.stdout.write

async function run(args: string[], cwd: string): Promise<CliRun> {
  const written = { stdout: '', stderr: '' }
  const capture = (stream: 'stdout' | 'stderr'): Write =>
    ((chunk: string | Uint8Array, encoding?: unknown, callback?: unknown) => {
      written[stream] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')
      const done = typeof encoding === 'function' ? encoding : callback
      if (typeof done === 'function') queueMicrotask(() => done())
      return true
    }) as Write
  const [stdout, stderr, before] = [process.stdout.write, process.stderr.write, process.cwd()]
  process.stdout.write = capture('stdout')
  process.stderr.write = capture('stderr')
  let code = 0
  try {
    process.chdir(cwd)
    await main(args)
  } catch (error) {
    code = reportError(error)
  } finally {
    process.stdout.write = stdout
    process.stderr.write = stderr
    process.chdir(before)
  }
  return { code, ...written }
}

process.on('message', (message: { id: number; args: string[]; cwd: string }) => {
  void run(message.args, message.cwd).then((result) => process.send!({ id: message.id, ...result }))
})
process.send!({ ready: true })
