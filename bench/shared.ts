/**
 * The contract every benchmarked server keeps: the allowed origin, the requests of each workload
 * and the exact bytes and cross-origin headers each must answer. Servers and the harness import it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { deflateSync, crc32 } from 'node:zlib'

export const ORIGIN = 'http://app.bench.localhost:3000'
export const JWT_SECRET = 'bench-secret-of-at-least-thirty-two-bytes!'
export const BASE_URL = '/api'
export const ENDPOINT = `${BASE_URL}/services`
export const JSON_TYPE = 'application/json; charset=utf-8'

/** The headers a simple (non-preflight) request from ORIGIN gets from every server. */
export const CORS_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': ORIGIN,
  'access-control-allow-credentials': 'true',
  'access-control-expose-headers': 'Content-Length',
  vary: 'Origin',
}
/** The @fastify/cors options of the Fastify-based peers (moleculer-web takes the same keys): they give the headers above. */
export const FASTIFY_CORS_OPTIONS = {
  origin: [ORIGIN],
  credentials: true,
  exposedHeaders: ['Content-Length'],
  allowedHeaders: ['Content-Type', 'Authorization'],
  methods: ['POST', 'GET', 'OPTIONS'],
  maxAge: 600,
}
/** Preflight extras (the defaults of the specification); not benchmarked, answered the same by all. */
export const PREFLIGHT_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-methods': 'POST, GET, OPTIONS',
  'access-control-allow-headers': 'Content-Type, Authorization',
  'access-control-max-age': '600',
}

export const WORKLOADS = [
  'execute-small',
  'execute-output',
  'execute-hooks',
  'explore-all',
  'execute-protected',
  'upload-1mb',
  'mcp-call',
  'execute-compress',
  'execute-idempotent',
] as const
export type WorkloadName = (typeof WORKLOADS)[number]
/**
 * Workloads of the scaling curves only (`BENCH_CURVES`): never in the workload table, served by
 * fastify-actions and fastify-bare alone. `payload-*` echo a JSON payload of about 1 KiB, 64 KiB and
 * 1 MiB (both servers with a 4 MiB body limit); `upload-10mb` is upload-1mb with a 10 MiB file (both
 * servers with a 16 MiB file limit).
 */
export const CURVE_WORKLOADS = ['payload-1kb', 'payload-64kb', 'payload-1mb', 'upload-10mb'] as const
export type CurveWorkloadName = (typeof CURVE_WORKLOADS)[number]
export type AnyWorkloadName = WorkloadName | CurveWorkloadName
/** The peers of the scaling curves: fastify-actions against Fastify doing the same work. */
export const CURVE_SERVERS = ['fastify-actions', 'fastify-bare'] as const
export type CurveServerName = (typeof CURVE_SERVERS)[number]
/** The body limit both servers get in the payload workloads (Fastify's default, 1 MiB, is below the 1 MiB payload's request). */
export const PAYLOAD_BODY_LIMIT = 4 * 1024 * 1024
/** The request body size each payload workload aims at (the exact size is in `requestOf(...).body.length`). */
export const PAYLOAD_BYTES: Record<'payload-1kb' | 'payload-64kb' | 'payload-1mb', number> = {
  'payload-1kb': 1024,
  'payload-64kb': 64 * 1024,
  'payload-1mb': 1024 * 1024,
}
/** The file of `upload-10mb`, and the per-file limit both servers get for it. */
export const BIG_UPLOAD = { size: 10 * 1024 * 1024, maxFileSize: 16 * 1024 * 1024 }

/** Workloads only fastify-actions serves: the peers skip them with this reason. */
export const OWN_ONLY: Partial<Record<WorkloadName, string>> = {
  'execute-idempotent': 'Idempotency-Key handling (fastify-actions only: compare with its execute-small)',
}
/** Workloads only some peers serve, with the reason the others skip. */
export const SERVED_BY: Partial<Record<AnyWorkloadName, { servers: readonly string[]; reason: string }>> = {
  'payload-1kb': { servers: CURVE_SERVERS, reason: 'scaling curve: fastify-actions vs fastify-bare only' },
  'payload-64kb': { servers: CURVE_SERVERS, reason: 'scaling curve: fastify-actions vs fastify-bare only' },
  'payload-1mb': { servers: CURVE_SERVERS, reason: 'scaling curve: fastify-actions vs fastify-bare only' },
  'upload-10mb': { servers: CURVE_SERVERS, reason: 'scaling curve: fastify-actions vs fastify-bare only' },
  'execute-output': { servers: ['fastify-actions', 'fastify-bare'], reason: 'output-schema serialization: fastify-actions vs the same response schema on fastify-bare' },
  'execute-compress': { servers: ['fastify-actions', 'fastify-bare'], reason: 'response compression: fastify-actions vs fastify-bare with @fastify/compress' },
  'mcp-call': { servers: ['fastify-actions', 'mcp-sdk'], reason: 'MCP: fastify-actions vs the MCP SDK\'s own stateless Streamable HTTP server' },
}
export const SERVERS = ['fastify-actions', 'fastify-bare', 'hono-zod', 'moleculer', 'node-http', 'fastify-bare-typebox', 'mcp-sdk'] as const
export type ServerName = (typeof SERVERS)[number]
/**
 * Servers that serve only some workloads: `fastify-bare-typebox` (bare Fastify with TypeBox's modules
 * loaded, the memory baseline of an application that writes its schemas with TypeBox) and `mcp-sdk`
 * (the MCP SDK's stateless Streamable HTTP server example on node:http).
 */
export const SERVES: Partial<Record<ServerName, { workloads: readonly AnyWorkloadName[]; reason: string }>> = {
  'fastify-bare-typebox': { workloads: ['execute-small'], reason: 'memory baseline: execute-small and the connections curve only' },
  'mcp-sdk': { workloads: ['mcp-call'], reason: 'an MCP server only' },
}
/** The server a workload's `vs` column divides by: fastify-bare, or the SDK's own server for `mcp-call`. */
export const BASELINE_OF: Partial<Record<WorkloadName, ServerName>> = { 'mcp-call': 'mcp-sdk' }

/** The action each execute workload calls. */
export const ACTION_OF = {
  'execute-small': 'echo',
  /** execute-small's request and answer, with an `output` schema (fastify-bare: the same response schema). */
  'execute-output': 'echo',
  'execute-hooks': 'hooked',
  'execute-protected': 'secure',
  /** execute-small with `Accept-Encoding: gzip, deflate, br`: compression is decided per answer (the answer stays under its threshold). */
  'execute-compress': 'echo',
  /** execute-small with an `Idempotency-Key`, a fresh one per request: the action declares `idempotency: 'required'`. */
  'execute-idempotent': 'echo',
} as const

/** The header `execute-idempotent` sends, with a fresh value per request (bench/load.ts, `uniqueHeader`). */
export const IDEMPOTENCY_HEADER = 'idempotency-key'

export const TASK = { title: 'Write the benchmark harness', count: 42 }

/** `mcp-call`: one stateless MCP `tools/call` of tasks.echo (tool `tasks_echo`) on `{baseUrl}/mcp`. */
export const MCP_PATH = `${BASE_URL}/mcp`
export const MCP_CALL = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'tasks_echo', arguments: TASK } }

/** What `explore` with `*`/`*` lists: the services every server pretends to host. */
export const SERVICE_LISTING = [
  {
    name: 'tasks',
    description: 'Benchmark tasks',
    actions: ['echo', 'hooked', 'secure', 'trimTitle', 'clampCount', 'audit'],
  },
  { name: 'files', description: 'Benchmark uploads', actions: ['upload'] },
]

export const executed = (service: string, action: string) => `Action '${service}.${action}' executed`

export interface Envelope {
  status: boolean
  message: string
  data: Record<string, unknown>
}

export const envelope = (status: boolean, message: string, data: Record<string, unknown> = {}): Envelope => ({ status, message, data })

/** The explore answer, built per call so every server serializes it per request as fastify-actions does. */
export const exploreAll = (): Envelope => envelope(true, 'Services listed', { services: SERVICE_LISTING })

export const UPLOAD = { field: 'file', name: 'bench.png', type: 'image/png', size: 1024 * 1024 }
export const UPLOAD_ALLOW = { mimeTypes: ['image/png', 'image/jpeg', 'application/pdf'], extensions: ['.png', '.jpg', '.jpeg', '.pdf'] }
export const MAX_FILENAME_LENGTH = 128

/** The same checks fastify-actions' upload chain makes on one file, for the peers. */
export function checkUpload(name: string, size: number, type: string): string | null {
  if (name.length > MAX_FILENAME_LENGTH) return 'file name too long'
  if (size === 0) return 'empty file not allowed'
  const dot = name.lastIndexOf('.')
  const extension = dot === -1 ? '' : name.slice(dot).toLowerCase()
  if (!UPLOAD_ALLOW.mimeTypes.includes(type) || !UPLOAD_ALLOW.extensions.includes(extension)) return 'file type not allowed'
  return null
}

/** Minimal request checks the peers make on the JSON body, written once. */
export function isTask(payload: unknown): payload is { title: string; count: number } {
  if (payload === null || typeof payload !== 'object') return false
  const { title, count } = payload as Record<string, unknown>
  return typeof title === 'string' && title.length >= 1 && Number.isInteger(count) && (count as number) >= 0
}

/** Hook steps of `execute-hooks`, shared by the peers (fastify-actions runs them as actions). */
export const hookSteps = {
  trimTitle: <T extends { title: string }>(task: T): T => ({ ...task, title: task.title.trim() }),
  clampCount: <T extends { count: number }>(task: T): T => ({ ...task, count: Math.min(task.count, 1000) }),
}

// ---------------------------------------------------------------- JWT (HS256)

const base64url = (input: Buffer | string) => Buffer.from(input).toString('base64url')

/** Signs the benchmark token (HS256). The harness uses it; servers only verify. */
export function signToken(claims: Record<string, unknown>, secret = JWT_SECRET): string {
  const head = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))
  const body = base64url(JSON.stringify(claims))
  const signature = createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url')
  return `${head}.${body}.${signature}`
}

/**
 * HS256 verification for the two peers without a JWT library of their own (node-http, moleculer):
 * header algorithm, signature, `exp` and `nbf`. fastify-bare uses @fastify/jwt, hono-zod hono/jwt.
 */
export function verifyHs256(token: string, secret = JWT_SECRET): Record<string, unknown> | null {
  const parts = token.split('.')
  if (parts.length !== 3) return null
  const [head, body, signature] = parts
  try {
    const header = JSON.parse(Buffer.from(head, 'base64url').toString('utf8')) as { alg?: unknown }
    if (header.alg !== 'HS256') return null
    const expected = createHmac('sha256', secret).update(`${head}.${body}`).digest()
    const given = Buffer.from(signature, 'base64url')
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>
    const now = Math.floor(Date.now() / 1000)
    if (typeof claims.exp === 'number' && claims.exp <= now) return null
    if (typeof claims.nbf === 'number' && claims.nbf > now) return null
    return claims
  } catch {
    return null
  }
}

export function bearerToken(header: string | undefined): string | undefined {
  return header && header.startsWith('Bearer ') ? header.slice(7) : undefined
}

// ---------------------------------------------------------------- the 1 MiB PNG

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(typed))
  return Buffer.concat([length, typed, crc])
}

/** A valid PNG of exactly `size` bytes: pseudo-random RGB pixels, padded with a private ancillary chunk. */
export function makePng(size = UPLOAD.size): Buffer {
  const width = 256
  const height = 256
  let seed = 0x2545f491
  const raw = Buffer.alloc((width * 3 + 1) * height)
  for (let i = 0; i < raw.length; i++) {
    seed ^= seed << 13
    seed ^= seed >>> 17
    seed ^= seed << 5
    raw[i] = i % (width * 3 + 1) === 0 ? 0 : seed & 0xff
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr.set([8, 2, 0, 0, 0], 8) // 8-bit RGB
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  const head = Buffer.concat([signature, pngChunk('IHDR', ihdr), pngChunk('IDAT', deflateSync(raw, { level: 0 }))])
  const end = pngChunk('IEND', Buffer.alloc(0))
  const padding = size - head.length - end.length - 12
  if (padding < 0) throw new Error(`makePng: ${size} bytes is too small`)
  return Buffer.concat([head, pngChunk('beNc', Buffer.alloc(padding, 0x2e)), end])
}

// ---------------------------------------------------------------- the requests

export interface BenchRequest {
  method: 'POST'
  path: string
  headers: Record<string, string>
  body: Buffer
}

const BOUNDARY = '----fastify-actions-bench-7d1f0c'

function multipartBody(fields: Record<string, string>, file: Buffer): Buffer {
  const parts: Buffer[] = []
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`))
  }
  parts.push(
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${UPLOAD.field}"; filename="${UPLOAD.name}"\r\nContent-Type: ${UPLOAD.type}\r\n\r\n`,
    ),
  )
  parts.push(file, Buffer.from(`\r\n--${BOUNDARY}--\r\n`))
  return Buffer.concat(parts)
}

const jsonRequest = (body: unknown, extra: Record<string, string> = {}): BenchRequest => ({
  method: 'POST',
  path: ENDPOINT,
  headers: { origin: ORIGIN, 'content-type': 'application/json', ...extra },
  body: Buffer.from(JSON.stringify(body)),
})

/** A token valid for a day from now: the run never outlives it. */
export function benchToken(): string {
  const now = Math.floor(Date.now() / 1000)
  return signToken({ sub: 'user-1', organizationId: 'org-1', role: 'bench', iat: now, exp: now + 86_400 })
}

/** One item of a payload workload's list. */
export interface PayloadItem {
  id: number
  name: string
  done: boolean
}
export type Payload = { items: PayloadItem[] }

/**
 * The payload of a `payload-*` workload: `{ items: [{ id, name, done }, …] }` with as many items as
 * bring the whole request body to at least the workload's size (1 KiB, 64 KiB or 1 MiB).
 */
export function payloadOf(workload: keyof typeof PAYLOAD_BYTES): Payload {
  const target = PAYLOAD_BYTES[workload]
  const overhead = JSON.stringify({ intent: 'execute', service: 'tasks', action: 'echo', payload: { items: [] } }).length
  const items: PayloadItem[] = []
  let size = overhead
  for (let id = 1; size < target; id++) {
    const item = { id, name: `item ${String(id).padStart(7, '0')}`, done: id % 3 === 0 }
    size += JSON.stringify(item).length + (items.length > 0 ? 1 : 0)
    items.push(item)
  }
  return { items }
}

/** The one request a workload sends, over and over, to every server. */
export function requestOf(workload: AnyWorkloadName, token = benchToken()): BenchRequest {
  switch (workload) {
    case 'payload-1kb':
    case 'payload-64kb':
    case 'payload-1mb':
      return jsonRequest({ intent: 'execute', service: 'tasks', action: 'echo', payload: payloadOf(workload) })
    case 'upload-10mb':
      return {
        method: 'POST',
        path: ENDPOINT,
        headers: { origin: ORIGIN, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
        body: multipartBody({ intent: 'execute', service: 'files', action: 'upload' }, makePng(BIG_UPLOAD.size)),
      }
    case 'execute-small':
    case 'execute-output':
    case 'execute-hooks':
      return jsonRequest({ intent: 'execute', service: 'tasks', action: ACTION_OF[workload], payload: TASK })
    case 'execute-compress':
      return jsonRequest({ intent: 'execute', service: 'tasks', action: 'echo', payload: TASK }, { 'accept-encoding': 'gzip, deflate, br' })
    case 'execute-idempotent':
      // The load process replaces the key with a fresh one per request (LoadSpec.uniqueHeader).
      return jsonRequest({ intent: 'execute', service: 'tasks', action: 'echo', payload: TASK }, { [IDEMPOTENCY_HEADER]: `bench-${process.pid}-${Date.now()}` })
    case 'execute-protected':
      return jsonRequest({ intent: 'execute', service: 'tasks', action: 'secure', payload: TASK }, { authorization: `Bearer ${token}` })
    case 'explore-all':
      return jsonRequest({ intent: 'explore', service: '*', action: '*', payload: {} })
    case 'mcp-call':
      return {
        ...jsonRequest(MCP_CALL, { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }),
        path: MCP_PATH,
      }
    case 'upload-1mb':
      return {
        method: 'POST',
        path: ENDPOINT,
        headers: { origin: ORIGIN, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
        body: multipartBody({ intent: 'execute', service: 'files', action: 'upload' }, makePng()),
      }
  }
}

/** The exact body every server must answer to `requestOf(workload)`. */
export function expectedBody(workload: AnyWorkloadName): string {
  switch (workload) {
    case 'payload-1kb':
    case 'payload-64kb':
    case 'payload-1mb':
      return JSON.stringify(envelope(true, executed('tasks', 'echo'), payloadOf(workload)))
    case 'upload-10mb':
      return JSON.stringify(envelope(true, executed('files', 'upload'), { name: UPLOAD.name, size: BIG_UPLOAD.size, type: UPLOAD.type }))
    case 'execute-small':
    case 'execute-output':
    case 'execute-hooks':
    case 'execute-protected':
    case 'execute-compress':
    case 'execute-idempotent':
      return JSON.stringify(envelope(true, executed('tasks', ACTION_OF[workload]), TASK))
    case 'explore-all':
      return JSON.stringify(exploreAll())
    case 'upload-1mb':
      return JSON.stringify(envelope(true, executed('files', 'upload'), { name: UPLOAD.name, size: UPLOAD.size, type: UPLOAD.type }))
    case 'mcp-call':
      return JSON.stringify({ result: { content: [{ type: 'text', text: JSON.stringify(TASK) }] }, jsonrpc: '2.0', id: 1 })
  }
}

// ---------------------------------------------------------------- server process plumbing

/** The workload a server process was started for (`BENCH_WORKLOAD`). */
export function workloadFromEnv(): WorkloadName {
  const name = process.env.BENCH_WORKLOAD as WorkloadName | undefined
  if (!name || !WORKLOADS.includes(name)) throw new Error(`BENCH_WORKLOAD must be one of ${WORKLOADS.join(', ')}`)
  return name
}

/** The workload a fastify-actions or fastify-bare process was started for: the curves' workloads too. */
export function anyWorkloadFromEnv(): AnyWorkloadName {
  const name = process.env.BENCH_WORKLOAD as AnyWorkloadName | undefined
  const all: readonly string[] = [...WORKLOADS, ...CURVE_WORKLOADS]
  if (!name || !all.includes(name)) throw new Error(`BENCH_WORKLOAD must be one of ${all.join(', ')}`)
  return name
}

/**
 * Tells the harness the port (one `READY <port>` line on stdout) and ends the process when the
 * harness goes away (its stdin pipe closes), so no server outlives a run.
 */
export function announce(port: number): void {
  process.stdout.write(`READY ${port}\n`)
  process.stdin.on('end', () => process.exit(0))
  process.stdin.on('error', () => process.exit(0))
  process.stdin.resume()
}
