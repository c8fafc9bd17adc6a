import t, { type Test } from 'tap'
import { messages } from '../../lib/index.js'
import { buildServer } from '../helpers/server.js'
import { BOUNDARY, filesService, rawMultipart, routingParts } from '../helpers/uploads.js'

// Findings 4 and 5: a file part whose `filename*` decodes to CR/LF disappeared (200, `files: {}`);
// a file part without `name` arrived as `files.undefined`; `a.exe\0.png` passed the extension
// check as `.png` and reached the handler. Each is now a 400 that says why.

const routing = rawMultipart(routingParts('flat')).subarray(0, -`--${BOUNDARY}--\r\n`.length)
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4])

/** The routing fields, then one part with these raw headers and the PNG bytes. */
function withPart(headers: string): Buffer {
  return Buffer.concat([routing, Buffer.from(`--${BOUNDARY}\r\n${headers}\r\n\r\n`), PNG, Buffer.from(`\r\n--${BOUNDARY}--\r\n`)])
}

async function send(t: Test, body: Buffer) {
  const server = await buildServer({ services: [filesService], rest: { uploads: { allow: { mimeTypes: ['image/png'], extensions: ['.png'] } } } })
  t.teardown(() => server.close())
  const response = await server.app.inject({
    method: 'POST',
    url: '/api/services',
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    payload: body,
  })
  return { status: response.statusCode, body: response.json() }
}

const partRefused = (reason: string) => ({ status: false, message: messages.multipartPartInvalid(reason), data: { error_category: 'validation', reason } })

t.test('a filename* that decodes to CR/LF is refused, not dropped', async (t) => {
  for (const encoded of ["utf-8''evil%0d%0a.png", "utf-8''evil%0a.png", "UTF-8''a%0D.png"]) {
    const answer = await send(t, withPart(`Content-Disposition: form-data; name="doc"; filename*=${encoded}\r\nContent-Type: image/png`))
    t.equal(answer.status, 400, encoded)
    t.same(answer.body, partRefused(messages.partReasons.lineBreakInFilename))
  }
})

t.test('a name that decodes to a line break is refused', async (t) => {
  const answer = await send(t, withPart("Content-Disposition: form-data; name*=utf-8''do%0ac; filename=\"a.png\"\r\nContent-Type: image/png"))
  t.equal(answer.status, 400)
  t.same(answer.body, partRefused(messages.partReasons.lineBreakInName))
})

t.test('a file part without name is refused, not filed as files.undefined', async (t) => {
  const answer = await send(t, withPart('Content-Disposition: form-data; filename="a.png"\r\nContent-Type: image/png'))
  t.equal(answer.status, 400)
  t.same(answer.body, partRefused(messages.partReasons.noName))
  const empty = await send(t, withPart('Content-Disposition: form-data; name=""; filename="a.png"\r\nContent-Type: image/png'))
  t.same(empty.body, partRefused(messages.partReasons.noName))
})

t.test('a part without a form-data disposition is refused, not skipped', async (t) => {
  const none = await send(t, withPart('Content-Type: image/png'))
  t.equal(none.status, 400)
  t.same(none.body, partRefused(messages.partReasons.notFormData))
  const attachment = await send(t, withPart('Content-Disposition: attachment; name="doc"; filename="a.png"'))
  t.same(attachment.body, partRefused(messages.partReasons.notFormData))
})

t.test('file names with control characters are refused (upload validation category)', async (t) => {
  const cases: Array<[string, string]> = [
    ["filename*=utf-8''a.exe%00.png", 'a.exe\0.png'],
    ["filename*=utf-8''%1b%5b31mred.png", '\x1b[31mred.png'],
    ["filename*=utf-8''bell%07.png", 'bell\x07.png'],
    ["filename*=utf-8''del%7f.png", 'del\x7f.png'],
    ["filename*=utf-8''invoice%e2%80%aegnp.exe.png", 'invoice\u202egnp.exe.png'],
    ['filename="tab\there.png"', 'tab\there.png'],
  ]
  for (const [param, name] of cases) {
    const answer = await send(t, withPart(`Content-Disposition: form-data; name="doc"; ${param}\r\nContent-Type: image/png`))
    t.equal(answer.status, 400, JSON.stringify(name))
    t.same(answer.body, { status: false, message: messages.fileNameInvalid, data: { error_category: 'validation', files: [{ name, size: 0 }] } })
  }
})

t.test('ordinary and non-ASCII names still pass', async (t) => {
  for (const [param, name] of [
    ['filename="photo.png"', 'photo.png'],
    ["filename*=utf-8''%C3%A9t%C3%A9.png", 'été.png'],
    ['filename="with space.png"', 'with space.png'],
  ]) {
    const answer = await send(t, withPart(`Content-Disposition: form-data; name="doc"; ${param}\r\nContent-Type: image/png`))
    t.equal(answer.status, 200, name)
    t.equal(answer.body.data.files.doc.name, name)
  }
})

t.test('a part the parser skips for a reason the guard cannot name is still refused, not dropped', async (t) => {
  // A space before the colon: busboy does not see a Content-Disposition header and skips the part.
  const answer = await send(t, withPart('Content-Disposition : form-data; name="doc"; filename="a.png"\r\nContent-Type: image/png'))
  t.equal(answer.status, 400)
  t.same(answer.body, partRefused(messages.partReasons.dropped))
})
