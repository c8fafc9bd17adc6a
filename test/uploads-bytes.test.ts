import t from 'tap'
import { createHash, randomBytes } from 'node:crypto'
import http from 'node:http'
import { createAction, Err, Ok, type Service } from '../lib/index.js'
import { buildServer } from './helpers/server.js'

// The File a handler receives is built from the streamed chunks in one copy (plugins/uploads.ts,
// toFile): every way of reading it must give back exactly the bytes that were sent.
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

async function streamed(file: File): Promise<Uint8Array> {
  const pieces: Uint8Array[] = []
  for await (const piece of file.stream() as unknown as AsyncIterable<Uint8Array>) pieces.push(piece)
  return Buffer.concat(pieces)
}

const hashes = createAction({
  name: 'hashes',
  description: 'Hashes each file read three ways',
  isSpecial: { contentType: 'multipart/form-data', uploadMode: 'structured' },
  handler: async (data) => {
    const files = (data as { files: Record<string, File | File[]> }).files
    const out: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(files)) {
      const file = Array.isArray(value) ? value[0] : value
      if (!(file instanceof File)) return Err('not a File')
      const whole = new Uint8Array(await file.arrayBuffer())
      const tail = new Uint8Array(await file.slice(file.size - 1000).arrayBuffer())
      out[key] = { name: file.name, type: file.type, size: file.size, arrayBuffer: sha(whole), stream: sha(await streamed(file)), tail: sha(tail) }
    }
    return Ok(out)
  },
})
const service: Service = { name: 'files', description: 'Uploads', actions: [hashes] }

const BOUNDARY = 'bytes-boundary-5c1e'
function multipart(files: Array<{ field: string; name: string; bytes: Buffer }>): Buffer {
  const parts: Buffer[] = []
  for (const [name, value] of Object.entries({ intent: 'execute', service: 'files', action: 'hashes' })) {
    parts.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`))
  }
  for (const { field, name, bytes } of files) {
    parts.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${field}"; filename="${name}"\r\nContent-Type: image/png\r\n\r\n`), bytes, Buffer.from('\r\n'))
  }
  parts.push(Buffer.from(`--${BOUNDARY}--\r\n`))
  return Buffer.concat(parts)
}

t.test('every byte of streamed files reaches the handler, read whole, streamed or sliced', async (t) => {
  const server = await buildServer({ services: [service], rest: { uploads: { allow: { mimeTypes: ['image/png'], extensions: ['.png'] } } } })
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => server.close())
  const { port } = server.app.server.address() as { port: number }
  const files = [
    { field: 'big', name: 'big.png', bytes: randomBytes(3 * 1024 * 1024 + 17) },
    { field: 'small', name: 'small.png', bytes: randomBytes(1500) },
  ]
  const body = multipart(files)
  const answer = await new Promise<{ status: number; body: any }>((resolve, reject) => {
    const request = http.request({ port, host: '127.0.0.1', method: 'POST', path: '/api/services', headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': body.length } }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }))
    })
    request.on('error', reject)
    // Odd-sized writes, so the files arrive in chunks that do not line up with anything.
    for (let at = 0; at < body.length; at += 7919) request.write(body.subarray(at, at + 7919))
    request.end()
  })
  t.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 300))
  for (const { field, name, bytes } of files) {
    const hash = sha(bytes)
    t.same(answer.body.data[field], { name, type: 'image/png', size: bytes.length, arrayBuffer: hash, stream: hash, tail: sha(bytes.subarray(bytes.length - 1000)) }, field)
  }
})
