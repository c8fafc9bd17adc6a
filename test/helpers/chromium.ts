import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const CHROMIUM = '/usr/bin/chromium'

/** A one-line reason to skip browser tests, or false when Chromium is installed. */
export function chromiumSkipReason(): string | false {
  return existsSync(CHROMIUM) ? false : `chromium is not installed at ${CHROMIUM}`
}

const flags = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // Virtual time does not advance while a fetch is pending, so the page's fetch chain finishes
  // before the DOM is dumped; the budget only bounds timers.
  '--virtual-time-budget=10000',
]

/**
 * Opens `url` in a fresh headless Chromium and returns the serialised DOM after the page settled.
 * The browser is killed (its own process group) if it has not exited within `timeoutMs`.
 */
export async function dumpDom(url: string, timeoutMs = 20_000): Promise<string> {
  const profile = await mkdtemp(join(tmpdir(), 'fastify-actions-chromium-'))
  try {
    return await new Promise<string>((resolve, reject) => {
      const browser = spawn(CHROMIUM, [...flags, `--user-data-dir=${profile}`, '--dump-dom', url], {
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let stdout = ''
      let stderr = ''
      browser.stdout.on('data', (chunk: Buffer) => (stdout += chunk))
      browser.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk).slice(-4000)))
      const timer = setTimeout(() => {
        if (browser.pid !== undefined) process.kill(-browser.pid, 'SIGKILL')
        reject(new Error(`chromium did not finish within ${timeoutMs}ms`))
      }, timeoutMs)
      browser.on('error', (error) => {
        clearTimeout(timer)
        reject(error)
      })
      browser.on('close', (code) => {
        clearTimeout(timer)
        if (code === 0) resolve(stdout)
        else reject(new Error(`chromium exited with ${code}: ${stderr}`))
      })
    })
  } finally {
    await rm(profile, { recursive: true, force: true })
  }
}

export interface PageServer {
  /** `http://127.0.0.1:<port>`: the page's origin. */
  origin: string
  close: () => Promise<void>
}

/** Serves one HTML page at `/` on a free loopback port; `html()` is called per request. */
export async function servePage(html: () => string): Promise<PageServer> {
  const server: Server = createServer((request, response) => {
    if (request.url !== '/') {
      response.writeHead(404).end()
      return
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** The JSON a page wrote, URI-encoded, into `<pre id="out">` (see `resultPage`). */
export function readResult(dom: string): unknown {
  const match = /<pre id="out">([^<]*)<\/pre>/.exec(dom)
  if (!match) throw new Error(`no result in the page: ${dom.slice(0, 500)}`)
  return JSON.parse(decodeURIComponent(match[1]))
}

/**
 * An HTML page that runs `script` (the body of an async function returning a JSON-able value)
 * and writes its result into `<pre id="out">` for `readResult`.
 */
export function resultPage(script: string): string {
  return `<!doctype html><html><body><pre id="out"></pre><script>
(async () => { ${script} })().then(
  (value) => { document.getElementById('out').textContent = encodeURIComponent(JSON.stringify(value)) },
  (error) => { document.getElementById('out').textContent = encodeURIComponent(JSON.stringify({ pageError: String(error) })) },
)
</script></body></html>`
}
