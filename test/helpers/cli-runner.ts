import { execFile, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export interface CliRun {
  code: number | null
  stdout: string
  stderr: string
}

/**
 * One process that runs many CLI command lines, for tests that run dozens of them (a process each
 * costs half a second of CPU): test/helpers/cli-runner-child.ts does with each what lib/cli/bin.ts
 * does (from source, through tsx). `run(args, cwd)` resolves with the exit code and what the command
 * wrote; command lines run one at a time (each changes the runner's folder and output streams).
 * The tests that use it still run some command lines as processes of their own, so bin.ts is covered.
 */
export async function cliProcess(): Promise<{ run: (args: string[], cwd: string) => Promise<CliRun>; close: () => void }> {
  const child = fork(fileURLToPath(new URL('./cli-runner-child.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  })
  let errors = ''
  child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')))
  const waiting = new Map<number, (result: CliRun) => void>()
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => {
      reject(new Error(`the CLI runner exited (${code}) before it was ready: ${errors}`))
      for (const answer of waiting.values()) answer({ code: null, stdout: '', stderr: `the CLI runner exited (${code}): ${errors}` })
      waiting.clear()
    })
    child.on('message', (message: { ready?: true; id?: number } & CliRun) => {
      if (message.ready) return resolve()
      waiting.get(message.id!)?.({ code: message.code, stdout: message.stdout, stderr: message.stderr })
      waiting.delete(message.id!)
    })
  })
  let next = 0
  let queue: Promise<unknown> = Promise.resolve()
  const run = (args: string[], cwd: string): Promise<CliRun> => {
    const id = next++
    const result = queue.then(
      () =>
        new Promise<CliRun>((resolve) => {
          waiting.set(id, resolve)
          child.send({ id, args, cwd })
        }),
    )
    queue = result
    return result
  }
  return { run, close: () => void child.kill() }
}

/** One command line as a process of its own, what a user runs: lib/cli/bin.ts from source (through tsx). */
export function cliAsProcess(args: string[], cwd: string): Promise<CliRun> {
  const bin = fileURLToPath(new URL('../../lib/cli/bin.ts', import.meta.url))
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', bin, ...args], { cwd, env: { ...process.env, NODE_OPTIONS: '' } }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr })
    })
  })
}

/** A test file's `cli(args, cwd)` on one runner process, started at its first use and ended at `t`'s teardown. */
export function sharedCliRunner(t: { teardown: (fn: () => unknown) => void }): (args: string[], cwd: string) => Promise<CliRun> {
  let runner: ReturnType<typeof cliProcess> | undefined
  t.teardown(async () => (await runner)?.close())
  return async (args, cwd) => (await (runner ??= cliProcess())).run(args, cwd)
}
