/** node-http: bare `node:http`, CORS headers by hand, JSON.parse and hand validation; multipart through the built-in WHATWG `Request.formData()`. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import {
  announce,
  bearerToken,
  checkUpload,
  CORS_HEADERS,
  ENDPOINT,
  envelope,
  executed,
  exploreAll,
  hookSteps,
  isTask,
  JSON_TYPE,
  ORIGIN,
  PREFLIGHT_HEADERS,
  UPLOAD,
  verifyHs256,
  workloadFromEnv,
  type Envelope,
} from '../shared.js'

const workload = workloadFromEnv()
const BODY_LIMIT = 1024 * 1024
type Task = { title: string; count: number }

function send(req: IncomingMessage, res: ServerResponse, status: number, body: Envelope): void {
  const text = JSON.stringify(body)
  const headers: Record<string, string | number> = { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text) }
  if (req.headers.origin === ORIGIN) Object.assign(headers, CORS_HEADERS)
  res.writeHead(status, headers)
  res.end(text)
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > BODY_LIMIT) reject(Object.assign(new Error('Request body too large'), { status: 413 }))
      else chunks.push(chunk)
    })
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')))
      } catch {
        reject(Object.assign(new Error('Invalid or missing JSON body'), { status: 400 }))
      }
    })
    req.on('error', reject)
  })
}

/** The envelope with fixed intent/service/action and a valid task, or null. */
function taskOf(body: unknown, action: string): Task | null {
  if (body === null || typeof body !== 'object') return null
  const { intent, service, action: name, payload } = body as Record<string, unknown>
  return intent === 'execute' && service === 'tasks' && name === action && isTask(payload) ? payload : null
}

async function execute(req: IncomingMessage, res: ServerResponse, action: string, steps: Array<(task: Task) => Task> = []) {
  const body = await readJson(req)
  let task = taskOf(body, action)
  if (!task) return send(req, res, 400, envelope(false, 'Validation failed'))
  for (const step of steps) task = step(task)
  const result = envelope(true, executed('tasks', action), { title: task.title, count: task.count })
  return send(req, res, 200, result)
}

async function upload(req: IncomingMessage, res: ServerResponse) {
  const request = new Request('http://127.0.0.1/', {
    method: 'POST',
    headers: { 'content-type': req.headers['content-type'] ?? '' },
    body: Readable.toWeb(req) as ReadableStream,
    duplex: 'half',
  } as RequestInit)
  const form = await request.formData()
  const file = form.get(UPLOAD.field)
  if (form.get('intent') !== 'execute' || form.get('service') !== 'files' || form.get('action') !== 'upload' || !(file instanceof File)) {
    return send(req, res, 400, envelope(false, 'Bad upload request'))
  }
  const problem = checkUpload(file.name, file.size, file.type)
  if (problem) return send(req, res, 400, envelope(false, problem, { error_category: 'validation' }))
  return send(req, res, 200, envelope(true, executed('files', 'upload'), { name: file.name, size: file.size, type: file.type }))
}

async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method === 'OPTIONS' && req.headers.origin === ORIGIN) {
    res.writeHead(204, { ...CORS_HEADERS, ...PREFLIGHT_HEADERS, 'content-length': 0 })
    return void res.end()
  }
  if (req.method !== 'POST' || req.url !== ENDPOINT) return send(req, res, 404, envelope(false, 'Route not found'))
  switch (workload) {
    case 'execute-small':
      return execute(req, res, 'echo')
    case 'execute-hooks': {
      // Global before/after and the action's hooks are plain calls around the handler here.
      return execute(req, res, 'hooked', [hookSteps.trimTitle, hookSteps.clampCount, (task) => task])
    }
    case 'execute-protected': {
      const token = bearerToken(req.headers.authorization)
      if (!token || !verifyHs256(token)) {
        req.resume()
        return send(req, res, 401, envelope(false, 'Authentication failed'))
      }
      return execute(req, res, 'secure')
    }
    case 'explore-all': {
      const body = (await readJson(req)) as Record<string, unknown> | null
      if (body?.intent !== 'explore' || body.service !== '*' || body.action !== '*') return send(req, res, 400, envelope(false, 'Validation failed'))
      return send(req, res, 200, exploreAll())
    }
    case 'upload-1mb':
      return upload(req, res)
  }
}

const server = createServer((req, res) => {
  route(req, res).catch((error: { status?: number; message?: string }) => {
    if (res.headersSent) return void res.destroy()
    const status = error.status ?? 500
    send(req, res, status, envelope(false, status === 500 ? 'Internal server error' : String(error.message)))
  })
})
server.keepAliveTimeout = 72_000
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  announce(typeof address === 'object' && address ? address.port : 0)
})
