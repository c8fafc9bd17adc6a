import t from 'tap'
import { PassThrough } from 'node:stream'
import type { FastifyRequest } from 'fastify'
import { resolveUploadSettings } from '../lib/uploads/config.js'
import { guardMultipart, MultipartRefused } from '../plugins/multipart-guard.js'

const boundary = 'XyZ-boundary-42'

function body(parts: Array<{ name: string; value: string; filename?: string }>, epilogue = ''): Buffer {
  const lines = parts.map(({ name, value, filename }) => {
    const disposition = `form-data; name="${name}"${filename === undefined ? '' : `; filename="${filename}"`}`
    const type = filename === undefined ? '' : 'Content-Type: application/pdf\r\n'
    return `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n${value}\r\n`
  })
  return Buffer.from(`${lines.join('')}--${boundary}--\r\n${epilogue}`, 'latin1')
}

/** Feeds `data` to the guard in chunks of `size` bytes; the parts it counted and the refusal, if any. */
function feed(data: Buffer, size: number, settings = resolveUploadSettings({ limits: { maxFieldSize: 64 } })) {
  const raw = new PassThrough()
  let refused: MultipartRefused | undefined
  raw.on('error', (error) => (refused = error as MultipartRefused))
  const request = { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, raw } as unknown as FastifyRequest
  const guard = guardMultipart(request, settings, 1024 * 1024)
  for (let at = 0; at < data.length && !refused; at += size) raw.emit('data', data.subarray(at, at + size))
  guard.stop()
  return { parts: guard.parts, refused: refused?.failure }
}

const valid = body([
  { name: 'intent', value: 'execute' },
  { name: 'note', value: 'x'.repeat(60) },
  { name: 'file', value: `%PDF-1.4 ${'\r\n--not-the-boundary '.repeat(40)}`, filename: 'a.pdf' },
  { name: 'tail', value: '' },
])

t.test('every chunk size, every straddled delimiter: all parts seen, nothing refused', async (t) => {
  for (let size = 1; size <= valid.length; size++) {
    const { parts, refused } = feed(valid, size)
    if (parts !== 4 || refused) t.fail(`chunks of ${size}: ${parts} parts, refused: ${refused?.error}`)
  }
  t.pass(`${valid.length} chunk sizes`)
})

t.test('a field over maxFieldSize is refused at every chunk size', async (t) => {
  const long = body([{ name: 'note', value: 'y'.repeat(200) }])
  for (let size = 1; size <= long.length; size += 3) {
    const { refused } = feed(long, size)
    if (refused?.code !== 'FA_ERR_UPLOAD_LIMIT' || (refused.data as { limit?: string }).limit !== 'maxFieldSize') {
      t.fail(`chunks of ${size}: ${refused?.code ?? 'not refused'}`)
    }
  }
  t.pass('refused each time')
})

t.test('an epilogue over its bound is refused at every chunk size', async (t) => {
  const tailHeavy = body([{ name: 'a', value: '1' }], 'z'.repeat(9000))
  for (const size of [1, 7, 64, 1000, 4096, tailHeavy.length]) {
    t.equal(feed(tailHeavy, size).refused?.code, 'FA_ERR_MULTIPART_INVALID', `chunks of ${size}`)
  }
})
