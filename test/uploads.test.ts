import t from 'tap'
import fc from 'fast-check'
import { messages, type LogEntry } from '../lib/index.js'
import { DEFAULTS } from '../lib/index.js'
const uploadDefaults = DEFAULTS.uploads
import { echoService } from './helpers/fixtures.js'
import { buildServer, execute, post } from './helpers/server.js'
import {
  BOUNDARY,
  encodeForm,
  filesService,
  pdf,
  png,
  postForm,
  postRaw,
  rawMultipart,
  routingParts,
  uploadForm,
} from './helpers/uploads.js'

const multipartType = `multipart/form-data; boundary=${BOUNDARY}`
const pdfSummary = (name = 'a.pdf', text = '%PDF-1.4 hello') => ({ name, type: 'application/pdf', size: Buffer.byteLength(text), text })
const validation = (message: string, data: Record<string, unknown>) => ({ status: false, message, data: { error_category: 'validation', ...data } })
const defaultAllowed = { mimeTypes: [...uploadDefaults.mimeTypes], extensions: [...uploadDefaults.extensions] }

t.test('execute with a multipart body', async (t) => {
  const server = await buildServer({ services: [filesService, echoService] })
  t.teardown(() => server.close())
  const { app } = server

  t.test('the handler receives { fields, files } with File objects; routing fields are not fields', async (t) => {
    const answer = await postForm(app, uploadForm('flat', { note: 'hello', doc: pdf() }))
    t.equal(answer.statusCode, 200)
    t.same(answer.body, {
      status: true,
      message: messages.executed('files', 'flat'),
      data: { fields: { note: 'hello' }, files: { doc: pdfSummary() } },
    })
  })

  t.test('app.fetch takes a FormData body', async (t) => {
    const response = await app.fetch('/api/services', { method: 'POST', body: uploadForm('flat', { doc: pdf() }) })
    t.equal(response.status, 200)
    t.same(await response.json(), { status: true, message: messages.executed('files', 'flat'), data: { fields: {}, files: { doc: pdfSummary() } } })
  })

  t.test('a form without files gives empty buckets', async (t) => {
    const answer = await postForm(app, uploadForm('flat'))
    t.equal(answer.statusCode, 200)
    t.same(answer.body.data, { fields: {}, files: {} })
  })

  t.test('flat mode: a repeated key of one kind becomes an array, in form order', async (t) => {
    const answer = await postForm(app, uploadForm('flat', { tags: ['a', 'b'], docs: [pdf('1.pdf'), pdf('2.pdf')] }))
    t.equal(answer.statusCode, 200)
    t.same(answer.body.data, { fields: { tags: ['a', 'b'] }, files: { docs: [pdfSummary('1.pdf'), pdfSummary('2.pdf')] } })
  })

  t.test('flat mode refuses a key that carries both a file and a string', async (t) => {
    const answer = await postForm(app, uploadForm('flat', { doc: ['text', pdf()], ok: 'x', pic: [png(), 'caption'] }))
    t.equal(answer.statusCode, 400)
    t.same(answer.body, validation(messages.mixedKeyTypes, { conflicts: ['doc', 'pic'], hint: messages.mixedKeyTypesHint }))
  })

  t.test('structured mode: any mix; files and fields to their own buckets, repeats become arrays', async (t) => {
    const answer = await postForm(app, uploadForm('structured', { doc: ['text', pdf('1.pdf'), 'more', pdf('2.pdf')], one: 'x' }))
    t.equal(answer.statusCode, 200)
    t.same(answer.body, {
      status: true,
      message: messages.executed('files', 'structured'),
      data: { fields: { doc: ['text', 'more'], one: 'x' }, files: { doc: [pdfSummary('1.pdf'), pdfSummary('2.pdf')] } },
    })
  })

  t.test('without enforceContentType an action without isSpecial takes multipart too', async (t) => {
    const answer = await postForm(app, uploadForm('undeclared', { doc: pdf() }))
    t.equal(answer.statusCode, 200)
    t.same(answer.body.data, { fields: {}, files: { doc: pdfSummary() } })
  })

  t.test('a file name keeps its UTF-8 characters', async (t) => {
    const answer = await postForm(app, uploadForm('flat', { doc: pdf('résumé 履歴書.pdf') }))
    t.equal(answer.statusCode, 200)
    t.same(answer.body.data.files, { doc: pdfSummary('résumé 履歴書.pdf') })
  })

  t.test('a file input left empty (no file name, no bytes) is no file', async (t) => {
    const body = rawMultipart([...routingParts('flat'), { name: 'doc', filename: '', type: 'application/octet-stream', value: '' }])
    const answer = await postRaw(app, body, multipartType)
    t.equal(answer.statusCode, 200)
    t.same(answer.body.data, { fields: {}, files: {} })
  })

  t.test('a text part declared application/json stays text', async (t) => {
    const body = rawMultipart([...routingParts('flat'), { name: 'meta', type: 'application/json', value: '{"a":[1,2]}' }])
    const answer = await postRaw(app, body, multipartType)
    t.equal(answer.statusCode, 200)
    t.same(answer.body.data, { fields: { meta: '{"a":[1,2]}' }, files: {} })
  })

  t.test('routing fields are required', async (t) => {
    for (const missing of ['intent', 'service', 'action']) {
      const body = rawMultipart([...routingParts('flat').filter((part) => part.name !== missing), { name: 'note', value: 'x' }])
      const answer = await postRaw(app, body, multipartType)
      t.equal(answer.statusCode, 400, `without ${missing}`)
      t.same(answer.body, { status: false, message: messages.formDataRouting, data: {} })
    }
    const empty = await postRaw(app, '', multipartType)
    t.equal(empty.statusCode, 400, 'an empty form')
    t.same(empty.body, { status: false, message: messages.formDataRouting, data: {} })
    const asFiles = rawMultipart([{ name: 'intent', filename: 'intent.txt', type: 'text/plain', value: 'execute' }, ...routingParts('flat').slice(1)])
    const fileIntent = await postRaw(app, asFiles, multipartType)
    t.equal(fileIntent.statusCode, 400, 'a routing field sent as a file')
    t.same(fileIntent.body, { status: false, message: messages.formDataRouting, data: {} })
  })

  t.test('routing fields are checked like a JSON body', async (t) => {
    const badIntent = await postForm(app, uploadForm('flat', {}, { intent: 'destroy' }))
    t.equal(badIntent.statusCode, 400)
    t.same(badIntent.body, {
      status: false,
      message: messages.invalidRequest,
      data: { errors: [{ path: '/intent', message: "must be one of 'explore', 'execute', 'schema'" }] },
    })
    const form = uploadForm('flat')
    form.append('service', 'again')
    const repeated = await postForm(app, form)
    t.equal(repeated.statusCode, 400)
    t.same(repeated.body, { status: false, message: messages.invalidRequest, data: { errors: [{ path: '/service', message: 'must be a string' }] } })
  })

  t.test('unknown service or action, and wildcards, answer as for JSON', async (t) => {
    const noAction = await postForm(app, uploadForm('nope', { doc: pdf() }))
    t.equal(noAction.statusCode, 400)
    t.same(noAction.body, { status: false, message: messages.actionNotFound('files', 'nope'), data: {} })
    const noService = await postForm(app, uploadForm('flat', {}, { service: 'nope' }))
    t.equal(noService.statusCode, 400)
    t.same(noService.body, { status: false, message: messages.serviceNotFound('nope'), data: {} })
    const wildcard = await postForm(app, uploadForm('*', { doc: pdf() }))
    t.equal(wildcard.statusCode, 400)
    t.same(wildcard.body, { status: false, message: messages.wildcardExecute('files', '*'), data: {} })
  })
})

t.test('explore and schema with a multipart body', async (t) => {
  const server = await buildServer({ services: [filesService], rest: { discovery: { enabled: true, secret: 's3cret' } } })
  t.teardown(() => server.close())
  const { app } = server
  const discover = (intent: string, secret?: string) =>
    postForm(app, uploadForm('flat', secret === undefined ? {} : { discoverySecret: secret }, { intent, action: '*' }))

  for (const intent of ['explore', 'schema']) {
    t.test(`${intent}: discoverySecret is read from the form fields`, async (t) => {
      const ok = await discover(intent, 's3cret')
      t.equal(ok.statusCode, 200)
      t.equal(ok.body.status, true)
      const names = intent === 'explore' ? ok.body.data.actions.map((action: { name: string }) => action.name) : Object.keys(ok.body.data)
      t.same(names, ['flat', 'structured', 'jsonOnly', 'undeclared'])
      for (const secret of ['wrong', undefined]) {
        const denied = await discover(intent, secret)
        t.equal(denied.statusCode, 403)
        t.same(denied.body, { status: false, message: messages.discoverySecret, data: {} })
      }
    })
  }
})

t.test('enforceContentType', async (t) => {
  const server = await buildServer({ services: [filesService, echoService], rest: { uploads: { enforceContentType: true } } })
  t.teardown(() => server.close())
  const { app } = server
  const unsupported = { status: false, message: messages.unsupportedMediaType, data: {} }

  t.test('multipart to an action that declares multipart/form-data runs', async (t) => {
    const answer = await postForm(app, uploadForm('flat', { doc: pdf() }))
    t.equal(answer.statusCode, 200)
  })
  t.test('multipart to an action that declares another content type is a 415', async (t) => {
    const answer = await postForm(app, uploadForm('jsonOnly', { doc: pdf() }))
    t.equal(answer.statusCode, 415)
    t.same(answer.body, unsupported)
  })
  t.test('multipart to an action without isSpecial (a JSON action) is a 415', async (t) => {
    const answer = await postForm(app, uploadForm('undeclared', { doc: pdf() }))
    t.equal(answer.statusCode, 415)
    t.same(answer.body, unsupported)
  })
  t.test('JSON to an action that declares multipart/form-data is a 415', async (t) => {
    const answer = await execute(app, 'files', 'flat', { fields: {}, files: {} })
    t.equal(answer.statusCode, 415)
    t.same(answer.body, unsupported)
  })
  t.test('JSON to a JSON action runs, declared or not; +json counts as JSON', async (t) => {
    const declared = await execute(app, 'files', 'jsonOnly', { a: 1 })
    t.equal(declared.statusCode, 200)
    t.same(declared.body.data, { received: { a: 1 } })
    const undeclared = await execute(app, 'tasks', 'echo', { title: 't', count: 1 })
    t.equal(undeclared.statusCode, 200)
    const vendor = await post(app, JSON.stringify({ intent: 'execute', service: 'files', action: 'jsonOnly', payload: {} }), {
      headers: { 'content-type': 'application/vnd.api+json' },
    })
    t.equal(vendor.statusCode, 200)
  })
  t.test('without the option, a JSON body reaches a multipart action', async (t) => {
    const loose = await buildServer({ services: [filesService] })
    t.teardown(() => loose.close())
    const answer = await execute(loose.app, 'files', 'flat', { fields: { a: 'b' }, files: {} })
    t.equal(answer.statusCode, 200)
    t.same(answer.body.data, { fields: { a: 'b' }, files: {} })
    const multipartToJson = await postForm(loose.app, uploadForm('jsonOnly', { note: 'n' }))
    t.equal(multipartToJson.statusCode, 200)
    t.same(multipartToJson.body.data, { received: { fields: { note: 'n' }, files: {} } })
  })
})

t.test('the validation chain, one refusal each (defaults)', async (t) => {
  const server = await buildServer({ services: [filesService] })
  t.teardown(() => server.close())
  const { app } = server

  t.test('file name too long', async (t) => {
    const name = `${'n'.repeat(124)}.pdf`
    const ok = await postForm(app, uploadForm('flat', { doc: pdf(name) }))
    t.equal(ok.statusCode, 200, '128 characters pass')
    const long = `${'n'.repeat(125)}.pdf`
    const answer = await postForm(app, uploadForm('flat', { doc: pdf(long) }))
    t.equal(answer.statusCode, 400)
    t.same(answer.body, validation(messages.fileNameTooLong, { limit: 'maxFilenameLength', max: 128, files: [{ name: long, size: 14 }] }))
  })
  t.test('empty file not allowed', async (t) => {
    const answer = await postForm(app, uploadForm('flat', { doc: pdf('empty.pdf', '') }))
    t.equal(answer.statusCode, 400)
    t.same(answer.body, validation(messages.emptyFile, { files: [{ name: 'empty.pdf', size: 0 }] }))
  })
  t.test('file count: an eleventh file is refused without being read', async (t) => {
    const docs = Array.from({ length: 11 }, (_, i) => pdf(`${i}.pdf`))
    const answer = await postForm(app, uploadForm('flat', { docs }))
    t.equal(answer.statusCode, 400)
    t.same(
      answer.body,
      validation(messages.uploadLimitExceeded, {
        limit: 'maxFiles',
        max: 10,
        files: docs.map((doc, i) => ({ name: doc.name, size: i < 10 ? 14 : 0 })),
      }),
    )
    const ten = await postForm(app, uploadForm('flat', { docs: docs.slice(0, 10) }))
    t.equal(ten.statusCode, 200, 'ten pass')
  })
  t.test('file type not allowed: the declared type and the extension must both be allowed', async (t) => {
    const text = new File(['hi'], 'a.txt', { type: 'text/plain' })
    const pdfNamedGif = new File(['GIF89a'], 'a.gif', { type: 'application/pdf' })
    const gifNamedPdf = new File(['GIF89a'], 'b.pdf', { type: 'image/gif' })
    const answer = await postForm(app, uploadForm('flat', { a: text, b: pdfNamedGif, c: gifNamedPdf, d: pdf() }))
    t.equal(answer.statusCode, 400)
    t.same(
      answer.body,
      validation(messages.fileTypeNotAllowed, {
        rejected: [
          { name: 'a.txt', type: 'text/plain' },
          { name: 'a.gif', type: 'application/pdf' },
          { name: 'b.pdf', type: 'image/gif' },
        ],
        allowed: defaultAllowed,
      }),
    )
    const upper = await postForm(app, uploadForm('flat', { doc: new File(['%PDF-'], 'SCAN.PDF', { type: 'Application/PDF' }) }))
    t.equal(upper.statusCode, 200, 'types and extensions compare without case')
  })
})

t.test('the validation chain with configured limits', async (t) => {
  const server = await buildServer({
    services: [filesService],
    rest: { uploads: { limits: { minFileSize: 4, maxFileSize: 100, maxTotalSize: 150, maxFields: 5, maxFieldSize: 10 } } },
  })
  t.teardown(() => server.close())
  const { app } = server
  const bytes = (name: string, size: number) => new File([new Uint8Array(size).fill(65)], name, { type: 'application/pdf' })

  t.test('file too small', async (t) => {
    const answer = await postForm(app, uploadForm('flat', { doc: bytes('small.pdf', 3) }))
    t.equal(answer.statusCode, 400)
    t.same(answer.body, validation(messages.fileTooSmall, { limit: 'minFileSize', min: 4, files: [{ name: 'small.pdf', size: 3 }] }))
    t.equal((await postForm(app, uploadForm('flat', { doc: bytes('four.pdf', 4) }))).statusCode, 200, 'the minimum passes')
  })
  t.test('per-file size: a file past the limit is cut off one byte after it', async (t) => {
    t.equal((await postForm(app, uploadForm('flat', { doc: bytes('max.pdf', 100) }))).statusCode, 200, 'the maximum passes')
    for (const size of [101, 5000]) {
      const answer = await postForm(app, uploadForm('flat', { doc: bytes('big.pdf', size) }))
      t.equal(answer.statusCode, 400)
      t.same(answer.body, validation(messages.uploadLimitExceeded, { limit: 'maxFileSize', max: 100, files: [{ name: 'big.pdf', size: 101 }] }))
    }
  })
  t.test('total size: reading stops once the files together pass it', async (t) => {
    const answer = await postForm(app, uploadForm('flat', { a: bytes('a.pdf', 100), b: bytes('b.pdf', 100), c: bytes('c.pdf', 100) }))
    t.equal(answer.statusCode, 400)
    t.match(answer.body, validation(messages.uploadLimitExceeded, { limit: 'maxTotalSize', max: 150 }))
    const files: Array<{ name: string; size: number }> = answer.body.data.files
    t.same(files.map((file) => file.name), ['a.pdf', 'b.pdf'], 'the third file is never read')
    t.ok(files[0].size + files[1].size > 150, 'the sizes read pass the limit')
    const fits = await postForm(app, uploadForm('flat', { a: bytes('a.pdf', 100), b: bytes('b.pdf', 50) }))
    t.equal(fits.statusCode, 200, 'the limit itself passes')
  })
  t.test('text fields: size and count', async (t) => {
    const long = await postForm(app, uploadForm('flat', { note: '12345678901' }))
    t.equal(long.statusCode, 400)
    t.same(long.body, validation(messages.uploadLimitExceeded, { limit: 'maxFieldSize', max: 10, files: [], fields: ['note'] }))
    t.equal((await postForm(app, uploadForm('flat', { note: '1234567890' }))).statusCode, 200, '10 bytes pass')
    const many = await postForm(app, uploadForm('flat', { a: 'a', b: 'b', c: 'c' }))
    t.equal(many.statusCode, 400)
    t.same(many.body, validation(messages.uploadLimitExceeded, { limit: 'maxFields', max: 5, files: [] }))
    t.equal((await postForm(app, uploadForm('flat', { a: 'a', b: 'b' }))).statusCode, 200, 'five fields, the routing ones included, pass')
  })
})

t.test('the chain: the first failure wins', async (t) => {
  const server = await buildServer({ services: [filesService], rest: { uploads: { limits: { maxFiles: 2, maxFileSize: 100 } } } })
  t.teardown(() => server.close())
  const { app } = server
  const long = `${'n'.repeat(130)}.pdf`

  t.test('a long name wins over an empty file and a cut-off', async (t) => {
    const answer = await postForm(app, uploadForm('flat', { a: pdf('e.pdf', ''), b: pdf(long), c: new File([new Uint8Array(500)], 'big.pdf', { type: 'application/pdf' }) }))
    t.equal(answer.statusCode, 400)
    t.equal(answer.body.message, messages.fileNameTooLong)
  })
  t.test('an empty file wins over the count', async (t) => {
    const answer = await postForm(app, uploadForm('flat', { a: pdf('e.pdf', ''), b: pdf(), c: pdf(), d: pdf() }))
    t.equal(answer.statusCode, 400)
    t.same(answer.body, validation(messages.emptyFile, { files: [{ name: 'e.pdf', size: 0 }] }))
  })
  t.test('the count wins over the type', async (t) => {
    const text = new File(['x'], 'a.txt', { type: 'text/plain' })
    const answer = await postForm(app, uploadForm('flat', { a: text, b: text, c: text }))
    t.equal(answer.body.data.limit, 'maxFiles')
  })
  t.test('the mode is checked before the chain', async (t) => {
    const answer = await postForm(app, uploadForm('flat', { a: ['x', pdf('e.pdf', '')] }))
    t.equal(answer.body.message, messages.mixedKeyTypes)
  })
})

t.test('configured types: wildcards and extensions without a dot', async (t) => {
  const server = await buildServer({ services: [filesService], rest: { uploads: { allow: { mimeTypes: ['image/*'], extensions: ['gif', 'PNG'] } } } })
  t.teardown(() => server.close())
  const gif = new File(['GIF89a'], 'x.gif', { type: 'image/gif' })
  t.equal((await postForm(server.app, uploadForm('flat', { gif, pic: png() }))).statusCode, 200)
  const answer = await postForm(server.app, uploadForm('flat', { doc: pdf() }))
  t.equal(answer.statusCode, 400)
  t.same(answer.body, validation(messages.fileTypeNotAllowed, { rejected: [{ name: 'a.pdf', type: 'application/pdf' }], allowed: { mimeTypes: ['image/*'], extensions: ['.gif', '.png'] } }))
})

t.test('malformed multipart bodies are a 400 envelope, never a 500', async (t) => {
  const server = await buildServer({ services: [filesService] })
  t.teardown(() => server.close())
  const { app } = server
  const invalid = { status: false, message: messages.invalidMultipart, data: {} }
  const { payload, contentType } = await encodeForm(uploadForm('flat', { doc: pdf('a.pdf', '%PDF-'.padEnd(2000, 'x')) }))

  const cases: Array<[string, string | Buffer, string]> = [
    ['no boundary', payload, 'multipart/form-data'],
    ['a boundary that is not in the body', payload, 'multipart/form-data; boundary=nothing-like-it'],
    ['a body cut inside a file', payload.subarray(0, payload.length - 500), contentType],
    ['a body cut inside the routing fields', payload.subarray(0, 60), contentType],
    ['garbage', 'hello, this is not multipart at all', multipartType],
    ['a body without its closing delimiter', rawMultipart(routingParts('flat')).subarray(0, -`--${BOUNDARY}--\r\n`.length), multipartType],
    ['a part header without an end', `--${BOUNDARY}\r\nContent-Disposition: form-data; name="intent"`, multipartType],
  ]
  for (const [name, body, type] of cases) {
    t.test(name, async (t) => {
      const answer = await postRaw(app, body, type)
      t.equal(answer.statusCode, 400)
      t.same(answer.body, invalid)
    })
  }
  t.test('through app.fetch too', async (t) => {
    const response = await app.fetch('/api/services', { method: 'POST', headers: { 'content-type': multipartType }, body: 'garbage' })
    t.equal(response.status, 400)
    t.same(await response.json(), invalid)
  })
  t.test('field names that would reach Object.prototype', async (t) => {
    for (const name of ['__proto__', 'constructor', 'hasOwnProperty']) {
      const answer = await postRaw(app, rawMultipart([...routingParts('flat'), { name, value: '{}' }]), multipartType)
      t.equal(answer.statusCode, 400, name)
      t.same(answer.body, validation(messages.invalidMultipart, { hint: messages.reservedFieldName }))
    }
    t.equal(({} as Record<string, unknown>).polluted, undefined)
  })
})

t.test('junk multipart bodies never get a 5xx, always the envelope', async (t) => {
  const server = await buildServer({ services: [filesService], rest: { uploads: { limits: { maxFileSize: 64, maxFieldSize: 64 } } } })
  t.teardown(() => server.close())
  const piece = fc.oneof(
    fc.constantFrom(`--${BOUNDARY}\r\n`, `--${BOUNDARY}--\r\n`, '\r\n', '\r\n\r\n', 'Content-Disposition: form-data; name="', '"; filename="', 'Content-Type: ', 'intent', 'execute', 'files', 'flat', '__proto__'),
    fc.string({ maxLength: 80 }),
    fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
  )
  await fc.assert(
    fc.asyncProperty(fc.array(piece, { maxLength: 30 }), fc.boolean(), async (pieces, withBoundary) => {
      const body = Buffer.from(pieces.join(''), 'latin1')
      const answer = await postRaw(server.app, body, withBoundary ? multipartType : 'multipart/form-data')
      // A valid form is possible in principle (and answers 200); nothing may be a 5xx or leave the envelope.
      return answer.statusCode < 500 && answer.body.status === (answer.statusCode === 200) && typeof answer.body.message === 'string'
    }),
    { numRuns: 300 },
  )
})

t.test('uploads.diagnostics logs refusals through resources.logger', async (t) => {
  const entries: LogEntry[] = []
  const log = (entry: LogEntry) => {
    entries.push(entry)
    return 'log-1'
  }
  const server = await buildServer({
    services: [filesService],
    resources: { logger: { info: log, warn: log, error: log } },
    rest: { uploads: { diagnostics: true, limits: { maxFileSize: 10 } } },
  })
  t.teardown(() => server.close())
  await postForm(server.app, uploadForm('flat', { doc: pdf() }))
  await postForm(server.app, uploadForm('flat', { doc: new File(['x'], 'a.txt', { type: 'text/plain' }) }))
  await postRaw(server.app, 'garbage', 'multipart/form-data')
  t.same(
    entries.map(({ atFunction, message }) => ({ atFunction, message })),
    [
      { atFunction: 'uploads.read', message: `POST /api/services: ${messages.uploadLimitExceeded}` },
      { atFunction: 'uploads.read', message: `POST /api/services: ${messages.fileTypeNotAllowed}` },
      { atFunction: 'uploads.read', message: `POST /api/services: ${messages.invalidMultipart} (Multipart: Boundary not found)` },
    ],
  )
  t.match(entries[0].data, { limit: 'maxFileSize', max: 10 })
})

t.test('uploads.diagnostics: false silences uploads when the server logs', async (t) => {
  const entries: LogEntry[] = []
  const log = (entry: LogEntry) => {
    entries.push(entry)
    return 'log-1'
  }
  const server = await buildServer({
    services: [filesService],
    diagnostics: true,
    resources: { logger: { info: log, warn: log, error: log } },
    rest: { uploads: { diagnostics: false } },
  })
  t.teardown(() => server.close())
  await postRaw(server.app, 'garbage', 'multipart/form-data')
  t.same(entries.filter((entry) => entry.atFunction === 'uploads.read'), [])
})

t.test('a limit that is not a count is refused at boot', async (t) => {
  for (const maxFileSize of [-1, 1.5, Number.NaN]) {
    await t.rejects(buildServer({ rest: { uploads: { limits: { maxFileSize } } } }), {
      message: `uploads.limits.maxFileSize must be a non-negative integer, got ${String(maxFileSize)}`,
    })
  }
})
