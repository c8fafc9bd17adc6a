import t from 'tap'
// First: it swaps node:zlib's decoders before the plugins keep them.
import { decoded } from './helpers/counting-decoders.js'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buffer } from 'node:stream/consumers'
import { promisify } from 'node:util'
import { brotliCompressSync, createGzip, deflateSync, gzipSync } from 'node:zlib'
import { messages } from '../lib/index.js'
import { buildServer } from './helpers/server.js'
import { rawPost, startMcpServer } from './helpers/mcp.js'
import { BOUNDARY, filesService, rawMultipart, routingParts } from './helpers/uploads.js'
import { echoService } from './helpers/fixtures.js'

// Request bodies with Content-Encoding (RFC 9110 8.4): gzip, deflate and br are decoded within the body
// limit, which applies to the decoded size; any other coding is a 415 naming the supported ones.

const SUPPORTED = ['gzip', 'deflate', 'br']
const CURL = '/usr/bin/curl'
const encoders: Record<string, (body: Buffer) => Buffer> = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync }
const executeBody = Buffer.from(JSON.stringify({ intent: 'execute', service: 'tasks', action: 'echo', payload: { title: 'zipped', count: 3 } }))
const executed = { status: true, message: messages.executed('tasks', 'echo'), data: { title: 'zipped', count: 3 } }
const unsupported = (coding: string) => ({ status: false, message: messages.unsupportedEncoding(coding, SUPPORTED), data: { supportedEncodings: SUPPORTED } })

t.test('gzip, deflate and br bodies are decoded on the endpoint and the per-action routes', async (t) => {
  const server = await buildServer({ rest: { openapi: { enabled: true } } })
  t.teardown(() => server.close())
  for (const [coding, encode] of Object.entries(encoders)) {
    const endpoint = await server.app.inject({ method: 'POST', url: '/api/services', payload: encode(executeBody), headers: { 'content-type': 'application/json', 'content-encoding': coding } })
    t.equal(endpoint.statusCode, 200, `the endpoint, ${coding}`)
    t.same(endpoint.json(), executed)
    const route = await server.app.inject({
      method: 'POST',
      url: '/api/services/tasks/echo',
      payload: encode(Buffer.from('{"title":"zipped","count":3}')),
      headers: { 'content-type': 'application/json', 'content-encoding': coding.toUpperCase() },
    })
    t.equal(route.statusCode, 200, `the action's route, ${coding} (codings are case-insensitive)`)
    t.same(route.json(), executed)
  }
  const stacked = await server.app.inject({
    method: 'POST',
    url: '/api/services',
    payload: brotliCompressSync(gzipSync(executeBody)),
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip, br' },
  })
  t.equal(stacked.statusCode, 200, 'two codings, undone last first')
  t.same(stacked.json(), executed)
  const identity = await server.app.inject({ method: 'POST', url: '/api/services', payload: executeBody, headers: { 'content-type': 'application/json', 'content-encoding': 'identity' } })
  t.equal(identity.statusCode, 200, 'identity is no coding')
})

t.test('any other coding is a 415 that names the supported ones', async (t) => {
  const server = await buildServer({ rest: { openapi: { enabled: true } } })
  t.teardown(() => server.close())
  for (const url of ['/api/services', '/api/services/tasks/echo']) {
    for (const coding of ['zstd', 'compress', 'gzip, zstd']) {
      const answer = await server.app.inject({ method: 'POST', url, payload: executeBody, headers: { 'content-type': 'application/json', 'content-encoding': coding } })
      t.equal(answer.statusCode, 415, `${url}, ${coding}`)
      t.same(answer.json(), unsupported(coding === 'gzip, zstd' ? 'zstd' : coding))
      t.equal(answer.headers['accept-encoding'], 'gzip, deflate, br', 'RFC 9110 12.5.3')
    }
  }
  const odd = await server.app.inject({ method: 'POST', url: '/api/services', payload: executeBody, headers: { 'content-type': 'application/json', 'content-encoding': 'x'.repeat(500) } })
  t.equal(odd.statusCode, 415)
  t.same(odd.json(), unsupported('?'), "the client's text is not echoed when it is no coding name")
  const many = await server.app.inject({ method: 'POST', url: '/api/services', payload: executeBody, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip, gzip, gzip' } })
  t.equal(many.statusCode, 415, 'three stacked codings: no real client')
})

t.test('a body that is not what its coding says is a 400 naming the coding, never executed', async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  for (const coding of ['br', 'gzip', 'deflate']) {
    const answer = await server.app.inject({ method: 'POST', url: '/api/services', payload: executeBody, headers: { 'content-type': 'application/json', 'content-encoding': coding } })
    t.equal(answer.statusCode, 400, `plain JSON labelled ${coding}`)
    t.same(answer.json(), { status: false, message: messages.undecodableBody(coding), data: {} })
  }
  const inner = await server.app.inject({
    method: 'POST',
    url: '/api/services',
    payload: brotliCompressSync(executeBody),
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip, br' },
  })
  t.equal(inner.statusCode, 400, 'the inner coding wrong: an answer, not a hang')
  t.same(inner.json(), { status: false, message: messages.undecodableBody('gzip, br'), data: {} })
  const truncated = gzipSync(executeBody).subarray(0, 20)
  const cut = await server.app.inject({ method: 'POST', url: '/api/services', payload: truncated, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } })
  t.equal(cut.statusCode, 400, 'a truncated stream')
})

t.test('the body limit applies to the decoded size: a zip bomb is refused at the limit', async (t) => {
  const server = await buildServer({ rest: { bodyLimit: 64 * 1024 } })
  t.teardown(() => server.close())
  const padded = Buffer.from(JSON.stringify({ intent: 'execute', service: 'tasks', action: 'echo', payload: { title: 'x'.repeat(200 * 1024), count: 1 } }))
  const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20))
  t.ok(bomb.length < 64 * 1024, `64 MiB of spaces in ${bomb.length} bytes: under the limit on the wire`)
  for (const [name, payload] of [['a body over the limit once decoded', gzipSync(padded)], ['a zip bomb', bomb]] as const) {
    const answer = await server.app.inject({ method: 'POST', url: '/api/services', payload, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } })
    t.equal(answer.statusCode, 413, name)
    t.same(answer.json(), { status: false, message: messages.bodyTooLarge, data: {} })
  }
  const within = await server.app.inject({ method: 'POST', url: '/api/services', payload: gzipSync(executeBody), headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } })
  t.equal(within.statusCode, 200, 'a small body still passes')
})

t.test('over a real socket: fetch sends a gzip body; a bomb is a 413 and the server stays up', async (t) => {
  const server = await buildServer({ rest: { bodyLimit: 64 * 1024 } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}/api/services`
  const ok = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync(executeBody) })
  t.equal(ok.status, 200)
  t.same(await ok.json(), executed)
  const bomb = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'br' }, body: brotliCompressSync(Buffer.alloc(32 * 1024 * 1024, 0x20)) })
  t.equal(bomb.status, 413)
  t.same(await bomb.json(), { status: false, message: messages.bodyTooLarge, data: {} })
  const after = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: executeBody })
  t.equal(after.status, 200)
})

t.test('MCP: an encoded JSON-RPC body is decoded; an unknown coding is the 415', async (t) => {
  const server = await startMcpServer(t, { rest: { bodyLimit: 64 * 1024 } })
  const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-encoding': 'gzip' },
    body: gzipSync(list),
  })
  t.equal(response.status, 200)
  const tools = (await response.json()) as { result: { tools: Array<{ name: string }> } }
  t.ok(tools.result.tools.some((tool) => tool.name === 'tasks_echo'), 'tools/list answered from a gzip body')
  const refused = await rawPost(server.url, list, { 'content-encoding': 'zstd' })
  t.equal(refused.status, 415)
  t.same(refused.json, unsupported('zstd'))
  const bomb = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-encoding': 'gzip' },
    body: gzipSync(Buffer.alloc(16 * 1024 * 1024, 0x20)),
  })
  t.equal(bomb.status, 413)
})

const KB = 1024
const MB = 1024 * KB
const multipartType = `multipart/form-data; boundary=${BOUNDARY}`
const form = (routing = routingParts('flat')) =>
  rawMultipart([...routing, { name: 'note', value: 'zipped form' }, { name: 'doc', value: '%PDF-1.4 zipped', filename: 'a.pdf', type: 'application/pdf' }])
const uploaded = {
  status: true,
  message: messages.executed('files', 'flat'),
  data: { fields: { note: 'zipped form' }, files: { doc: { name: 'a.pdf', type: 'application/pdf', size: 15, text: '%PDF-1.4 zipped' } } },
}
const fileTooLarge = (max: number) => ({
  status: false,
  message: messages.uploadLimitExceeded,
  data: { error_category: 'validation', limit: 'maxFileSize', max, files: [{ name: 'big.pdf', size: max + 1 }] },
})
/** A multipart body whose one file is `size` spaces, gzip'd as a stream (the plain body never exists in memory). */
async function gzipBomb(size: number, routing = routingParts('flat')): Promise<Buffer> {
  const head = rawMultipart([...routing, { name: 'doc', value: '', filename: 'big.pdf', type: 'application/pdf' }])
  const opening = head.subarray(0, head.lastIndexOf(Buffer.from(`\r\n--${BOUNDARY}--`)))
  const zip = createGzip()
  const done = buffer(zip)
  zip.write(opening)
  const block = Buffer.alloc(MB, 0x20)
  for (let left = size; left > 0; left -= MB) zip.write(left >= MB ? block : block.subarray(0, left))
  zip.end(Buffer.from(`\r\n--${BOUNDARY}--\r\n`))
  return done
}

t.test('uploads: gzip, deflate, br and stacked codings are decoded, on the endpoint and the per-action routes', async (t) => {
  const server = await buildServer({ services: [echoService, filesService], rest: { openapi: { enabled: true } } })
  t.teardown(() => server.close())
  for (const [coding, encode] of [...Object.entries(encoders), ['gzip, br', (body: Buffer) => brotliCompressSync(gzipSync(body))] as const]) {
    const endpoint = await server.app.inject({ method: 'POST', url: '/api/services', payload: encode(form()), headers: { 'content-type': multipartType, 'content-encoding': coding } })
    t.equal(endpoint.statusCode, 200, `the endpoint, ${coding}`)
    t.same(endpoint.json(), uploaded)
  }
  const route = await server.app.inject({ method: 'POST', url: '/api/services/files/flat', payload: gzipSync(form([])), headers: { 'content-type': multipartType, 'content-encoding': 'x-gzip' } })
  t.equal(route.statusCode, 200, "the action's route")
  t.same(route.json(), uploaded)
})

t.test('uploads: an unknown coding is the 415, bytes that are not their coding the 400, never executed', async (t) => {
  const server = await buildServer({ services: [echoService, filesService] })
  t.teardown(() => server.close())
  const zstd = await server.app.inject({ method: 'POST', url: '/api/services', payload: form(), headers: { 'content-type': multipartType, 'content-encoding': 'zstd' } })
  t.equal(zstd.statusCode, 415)
  t.same(zstd.json(), unsupported('zstd'))
  t.equal(zstd.headers['accept-encoding'], 'gzip, deflate, br')
  for (const coding of ['gzip', 'deflate', 'br']) {
    const plain = await server.app.inject({ method: 'POST', url: '/api/services', payload: form(), headers: { 'content-type': multipartType, 'content-encoding': coding } })
    t.equal(plain.statusCode, 400, `a plain form labelled ${coding}`)
    t.same(plain.json(), { status: false, message: messages.undecodableBody(coding), data: {} })
  }
  const cut = await server.app.inject({ method: 'POST', url: '/api/services', payload: gzipSync(form()).subarray(0, 60), headers: { 'content-type': multipartType, 'content-encoding': 'gzip' } })
  t.equal(cut.statusCode, 400, 'a truncated gzip stream')
  t.same(cut.json(), { status: false, message: messages.undecodableBody('gzip'), data: {} })
})

t.test('the limits count decoded bytes, and decoding stops at them: counted in what the decoders produce', async (t) => {
  // Every decoder the server makes counts what it hands on (test/helpers/counting-decoders.ts).
  decoded.bytes = 0
  const server = await buildServer({ services: [echoService, filesService], rest: { bodyLimit: 64 * KB, uploads: { limits: { maxFileSize: 256 * KB } } } })
  t.teardown(() => server.close())

  const bomb = await gzipBomb(64 * MB)
  t.ok(bomb.length < 128 * KB, `a 64 MiB file in ${bomb.length} bytes`)
  const upload = await server.app.inject({ method: 'POST', url: '/api/services', payload: bomb, headers: { 'content-type': multipartType, 'content-encoding': 'gzip' } })
  t.equal(upload.statusCode, 400, "refused at the file's limit, as the plain upload would be")
  t.same(upload.json(), fileTooLarge(256 * KB))
  t.ok(decoded.bytes < 2 * MB, `decoded ${decoded.bytes} bytes of 64 MiB: stopped at the limit`)
  t.ok(decoded.bytes > 256 * KB, 'the count saw the decoding reach the limit (the decoders are the counted ones)')

  decoded.bytes = 0
  const json = await server.app.inject({
    method: 'POST',
    url: '/api/services',
    payload: gzipSync(Buffer.alloc(64 * MB, 0x20)),
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
  })
  t.equal(json.statusCode, 413)
  t.same(json.json(), { status: false, message: messages.bodyTooLarge, data: {} })
  t.ok(decoded.bytes < 2 * MB, `decoded ${decoded.bytes} bytes of 64 MiB of JSON: stopped at the 64 KiB body limit`)
  t.ok(decoded.bytes > 64 * KB, 'the count saw the decoding reach the body limit')
})

t.test('over a real socket with curl: gzip JSON and a gzip upload; an upload bomb refused, the server stays up', { skip: existsSync(CURL) ? false : `${CURL} is not installed` }, async (t) => {
  const server = await buildServer({ services: [echoService, filesService], rest: { uploads: { limits: { maxFileSize: MB } } } })
  t.teardown(() => server.close())
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}/api/services`
  const dir = await mkdtemp(join(tmpdir(), 'content-encoding-curl-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const curl = async (file: string, body: Buffer, type: string) => {
    await writeFile(join(dir, file), body)
    const args = ['-sS', '-w', '\n%{http_code}', '--data-binary', `@${join(dir, file)}`, '-H', 'Content-Encoding: gzip', '-H', `Content-Type: ${type}`, url]
    const { stdout } = await promisify(execFile)(CURL, args)
    const [text, status] = stdout.split('\n')
    return { status: Number(status), body: JSON.parse(text!) }
  }
  t.same(await curl('body.json.gz', gzipSync(executeBody), 'application/json'), { status: 200, body: executed }, 'JSON')
  t.same(await curl('form.gz', gzipSync(form()), multipartType), { status: 200, body: uploaded }, 'an upload')
  t.same(await curl('bomb.gz', await gzipBomb(64 * MB), multipartType), { status: 400, body: fileTooLarge(MB) }, 'a bomb')
  t.same(await curl('again.json.gz', gzipSync(executeBody), 'application/json'), { status: 200, body: executed }, 'still serving')
})
