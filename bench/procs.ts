/** Child processes of the harness: pinned to a core, tracked, and all killed at the end, even on error. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { cpus } from 'node:os'
import type { LoadResult } from './load.js'

const children = new Set<ChildProcess>()

/** `taskset -c <core>` when the machine has it and at least two cores; otherwise the processes share the cores. */
export const canPin = cpus().length >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0

/** The core of the servers (0) and of the load generator (1) when pinning is possible. */
export const SERVER_CORE = 0
export const LOAD_CORE = 1

export interface Spawned {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
}

/** Starts `node <args>` (pinned to `core` when possible) and tracks it until it exits. */
export function spawnNode(args: string[], options: { core?: number; env?: Record<string, string> } = {}): Spawned {
  const command = canPin && options.core !== undefined ? 'taskset' : process.execPath
  const argv = canPin && options.core !== undefined ? ['-c', String(options.core), process.execPath, ...args] : args
  const child = spawn(command, argv, {
    env: { ...process.env, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  children.add(child)
  let out = ''
  let err = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk
  })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    err = (err + chunk).slice(-20_000)
  })
  child.once('exit', () => children.delete(child))
  return { child, stdout: () => out, stderr: () => err }
}

/** Waits for the `READY <port>` line of a server, or fails after `timeoutMs`. */
export function waitReady(spawned: Spawned, timeoutMs = 30_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const { child } = spawned
    const timer = setTimeout(() => done(new Error(`no READY line after ${timeoutMs} ms`)), timeoutMs)
    const onData = () => {
      const match = /^READY (\d+)$/m.exec(spawned.stdout())
      if (match) done(undefined, Number(match[1]))
    }
    const onExit = (code: number | null) => done(new Error(`exited with code ${code} before READY: ${spawned.stderr().slice(-2000)}`))
    function done(error?: Error, port?: number) {
      clearTimeout(timer)
      child.stdout!.off('data', onData)
      child.off('exit', onExit)
      if (error) reject(error)
      else resolve(port as number)
    }
    child.stdout!.on('data', onData)
    child.once('exit', onExit)
    onData()
  })
}

/** Waits for a process to exit and returns its stdout; rejects on a non-zero code or after `timeoutMs`. */
export function waitExit(spawned: Spawned, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const { child } = spawned
    if (child.exitCode !== null) {
      if (child.exitCode === 0) resolve(spawned.stdout())
      else reject(new Error(`exited with code ${child.exitCode}: ${spawned.stderr().slice(-2000)}`))
      return
    }
    const timer = setTimeout(() => {
      stop(spawned)
      reject(new Error(`still running after ${timeoutMs} ms`))
    }, timeoutMs)
    child.once('exit', (code) => {
      clearTimeout(timer)
      if (code === 0) resolve(spawned.stdout())
      else reject(new Error(`exited with code ${code}: ${spawned.stderr().slice(-2000)}`))
    })
  })
}

/** Ends one child: SIGTERM, then SIGKILL if it is still there after a second. */
export async function stop(spawned: Spawned): Promise<void> {
  const { child } = spawned
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.stdin?.end()
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 1000)
  await exited
  clearTimeout(timer)
}

/** Kills every child still running, synchronously (safe in an `exit` handler). */
export function killAll(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      try {
        process.kill(child.pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
  }
  children.clear()
}

/** Resident set size of a process in MiB, from /proc/<pid>/status (VmRSS); null where /proc is missing. */
export function rssMiB(pid: number | undefined): number | null {
  if (pid === undefined) return null
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) / 1024 : null
  } catch {
    return null
  }
}

const clockTicks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat; null where /proc is missing. */
export function cpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name (which may contain spaces) start at the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks
  } catch {
    return null
  }
}

/** Samples the RSS of `pid` every `everyMs` until `stop()` is called; returns the samples. */
export function sampleRss(pid: number | undefined, everyMs = 250): { stop: () => number[] } {
  const samples: number[] = []
  const take = () => {
    const value = rssMiB(pid)
    if (value !== null) samples.push(value)
  }
  const timer = setInterval(take, everyMs)
  return {
    stop() {
      clearInterval(timer)
      take()
      return samples
    },
  }
}

/** Resolves when the child has printed `line` (a whole line), fails if it exits first or after `timeoutMs`. */
function waitLine(spawned: Spawned, line: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const { child } = spawned
    const seen = () => spawned.stdout().split('\n').includes(line)
    if (seen()) return resolve()
    const timer = setTimeout(() => done(new Error(`no ${line} line after ${timeoutMs} ms`)), timeoutMs)
    const onData = () => {
      if (seen()) done()
    }
    const onExit = (code: number | null) => done(new Error(`exited with code ${code} before ${line}: ${spawned.stderr().slice(-2000)}`))
    const done = (error?: Error) => {
      clearTimeout(timer)
      child.stdout!.off('data', onData)
      child.off('exit', onExit)
      if (error) reject(error)
      else resolve()
    }
    child.stdout!.on('data', onData)
    child.once('exit', onExit)
  })
}

/**
 * One run of bench/load.js (`script`) on the load core with the spec in `specFile`: its warm-up
 * (`warmupSec`, in the same process), then `beforeWindow` (where a caller takes the server's CPU and
 * RSS baselines), then the measured window of `durationSec`.
 */
export async function runLoad(script: string, specFile: string, durationSec: number, warmupSec: number, beforeWindow?: () => void): Promise<LoadResult> {
  const load = spawnNode([script, specFile], { core: LOAD_CORE })
  // A load process that died after WARM: its exit is the error, not the write's EPIPE.
  load.child.stdin!.on('error', () => {})
  try {
    if (warmupSec > 0) {
      await waitLine(load, 'WARM', (warmupSec + 60) * 1000)
      beforeWindow?.()
      load.child.stdin!.write('go\n')
    } else beforeWindow?.()
    const stdout = await waitExit(load, (durationSec + 60) * 1000)
    return JSON.parse(stdout.trim().split('\n').pop() as string) as LoadResult
  } catch (error) {
    // No load process outlives a failed round (it would load the server of the next one).
    await stop(load)
    throw error
  }
}

/**
 * Runs a bench script's `main`: the server processes it started are killed when it ends, fails or
 * gets SIGINT/SIGTERM; on a signal `onSignal` runs too (the build's removal), then exit 130.
 */
export function runBench(main: () => Promise<void>, onSignal: () => void): void {
  process.on('exit', killAll)
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      killAll()
      onSignal()
      process.exit(130)
    })
  }
  main().catch((error: unknown) => {
    killAll()
    console.error(error)
    process.exitCode = 1
  })
}
