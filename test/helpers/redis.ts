import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'

/** A throwaway `redis-server` on a loopback port: no persistence, gone when stopped. */
export interface RedisInstance {
  readonly port: number
  /** Stops the server and waits for the process to exit; safe to call twice. */
  stop: () => Promise<void>
  /** SIGSTOP / SIGCONT: the server stalls (connections stay open, nothing answers), then goes on. */
  pause: () => void
  resume: () => void
}

const START_TIMEOUT_MS = 10_000
const STOP_TIMEOUT_MS = 5_000

/** Why Redis tests must skip on this machine, or false when `redis-server` can run. */
export function redisSkipReason(): string | false {
  const probe = spawnSync('redis-server', ['--version'], { stdio: 'ignore' })
  return probe.error || probe.status !== 0 ? 'redis-server is not installed' : false
}

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  server.close()
  await once(server, 'close')
  if (address === null || typeof address === 'string') throw new Error('no TCP address')
  return address.port
}

function launch(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', tmpdir()],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  return new Promise((resolve, reject) => {
    let output = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`redis-server did not start on port ${port} within ${START_TIMEOUT_MS}ms:\n${output}`))
    }, START_TIMEOUT_MS)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer)
        child.stdout?.off('data', onData)
        child.stdout?.resume()
        resolve(child)
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.once('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`redis-server exited with code ${code} before it was ready:\n${output}`))
    })
  })
}

/**
 * Starts `redis-server` on `port`, or on a free port (retried a few times if another process
 * takes the port between the probe and the start).
 */
export async function startRedis(port?: number): Promise<RedisInstance> {
  let child: ChildProcess | undefined
  let chosen = port ?? 0
  for (let attempt = 0; child === undefined; attempt++) {
    chosen = port ?? (await freePort())
    try {
      child = await launch(chosen)
    } catch (error) {
      if (port !== undefined || attempt >= 2) throw error
    }
  }
  const running = child
  let stopped: Promise<void> | undefined
  return {
    port: chosen,
    pause: () => void (running.exitCode === null && running.signalCode === null && running.kill('SIGSTOP')),
    resume: () => void (running.exitCode === null && running.signalCode === null && running.kill('SIGCONT')),
    stop() {
      stopped ??= (async () => {
        if (running.exitCode !== null || running.signalCode !== null) return
        const exited = once(running, 'exit')
        running.kill('SIGTERM')
        const timer = setTimeout(() => running.kill('SIGKILL'), STOP_TIMEOUT_MS)
        await exited
        clearTimeout(timer)
      })()
      return stopped
    },
  }
}
