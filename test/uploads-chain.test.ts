import t from 'tap'
import { messages, type Action } from '../lib/index.js'
import { resolveUploadSettings } from '../lib/uploads/config.js'
import { DEFAULTS } from '../lib/index.js'
const uploadDefaults = DEFAULTS.uploads
import { checkContentType, mediaTypeOf } from '../lib/uploads/content-type.js'
import { bucketForm, checkUploadMode, findMixedKeys, type FormEntry } from '../lib/uploads/form.js'
import { validateUploads, type FileReceipt } from '../lib/uploads/validate.js'

const receipt = (name: string, size: number, type = 'application/pdf', complete = true): FileReceipt => ({ name, type, size, complete })

t.test('defaults', async (t) => {
  const settings = resolveUploadSettings()
  t.same(settings.limits, {
    maxFiles: 10,
    maxFileSize: 10 * 1024 * 1024,
    minFileSize: 1,
    maxTotalSize: 20 * 1024 * 1024,
    maxFilenameLength: 128,
    maxFields: 100,
    maxFieldSize: 64 * 1024,
  })
  t.same(settings.allow, { mimeTypes: ['image/png', 'image/jpeg', 'application/pdf'], extensions: ['.png', '.jpg', '.jpeg', '.pdf'] })
  t.equal(settings.enforceContentType, false)
  t.same(resolveUploadSettings({ limits: { maxFiles: 0 } }).limits, { ...uploadDefaults.limits, maxFiles: 0 }, 'one limit set, the others default')
  t.same(resolveUploadSettings({ allow: { mimeTypes: [' Image/PNG '], extensions: ['PNG', '.Jpg'] } }).allow, { mimeTypes: ['image/png'], extensions: ['.png', '.jpg'] })
  t.throws(() => resolveUploadSettings({ limits: { maxTotalSize: -5 } }), { message: 'uploads.limits.maxTotalSize must be a non-negative integer, got -5' })
})

const codeOf: Record<string, string> = {
  [messages.fileNameTooLong]: 'FA_ERR_UPLOAD_FILENAME_LENGTH',
  [messages.emptyFile]: 'FA_ERR_UPLOAD_EMPTY_FILE',
  [messages.fileTooSmall]: 'FA_ERR_UPLOAD_TOO_SMALL',
  [messages.uploadLimitExceeded]: 'FA_ERR_UPLOAD_LIMIT',
  [messages.fileTypeNotAllowed]: 'FA_ERR_UPLOAD_TYPE',
}

t.test('the chain fails on the first error, in the specification order', async (t) => {
  const settings = resolveUploadSettings({ limits: { maxFilenameLength: 8, minFileSize: 3, maxFiles: 4, maxFileSize: 10, maxTotalSize: 15 } })
  const steps: Array<[string, (files: FileReceipt[]) => FileReceipt[], Record<string, unknown>]> = [
    [messages.fileNameTooLong, (files) => [receipt('a.pdf', 5), ...files.slice(1)], { limit: 'maxFilenameLength', max: 8, files: [{ name: 'longname.pdf', size: 5 }] }],
    [messages.emptyFile, (files) => files.map((file) => (file.name === 'e.pdf' ? receipt('e.pdf', 3) : file)), { files: [{ name: 'e.pdf', size: 0 }] }],
    [messages.fileTooSmall, (files) => files.map((file) => (file.name === 's.pdf' ? receipt('s.pdf', 3) : file)), { limit: 'minFileSize', min: 3, files: [{ name: 's.pdf', size: 2 }] }],
    [
      messages.uploadLimitExceeded,
      (files) => files.slice(1),
      { limit: 'maxFiles', max: 4, files: [{ name: 'a.pdf', size: 5 }, { name: 'e.pdf', size: 3 }, { name: 's.pdf', size: 3 }, { name: 'big.pdf', size: 11 }, { name: 'x.txt', size: 4 }] },
    ],
    [messages.uploadLimitExceeded, (files) => files.map((file) => (file.name === 'big.pdf' ? receipt('big.pdf', 10) : file)), { limit: 'maxFileSize', max: 10, files: [{ name: 'big.pdf', size: 11 }] }],
    [
      messages.uploadLimitExceeded,
      (files) => files.map((file) => (file.name === 'big.pdf' ? receipt('big.pdf', 5) : file)),
      { limit: 'maxTotalSize', max: 15, files: [{ name: 'e.pdf', size: 3 }, { name: 's.pdf', size: 3 }, { name: 'big.pdf', size: 10 }, { name: 'x.txt', size: 4 }] },
    ],
    [
      messages.fileTypeNotAllowed,
      (files) => files.map((file) => (file.name === 'x.txt' ? receipt('x.png', 4, 'image/png') : file)),
      { rejected: [{ name: 'x.txt', type: 'text/plain' }], allowed: settings.allow },
    ],
  ]
  // Every step fails at first; each round repairs the failure reported and reveals the next one.
  let files = [receipt('longname.pdf', 5), receipt('e.pdf', 0), receipt('s.pdf', 2), receipt('big.pdf', 11), receipt('x.txt', 4, 'text/plain')]
  for (const [message, repair, data] of steps) {
    const failed = validateUploads(files, settings)
    t.same(failed, { ok: false, code: codeOf[message], error: message, data: { error_category: 'validation', ...data } }, message)
    files = repair(files)
  }
  t.equal(validateUploads(files, settings), undefined, 'all repaired: the files pass')
})

t.test('a file cut off while streaming', async (t) => {
  const settings = resolveUploadSettings({ limits: { maxFileSize: 10, maxFiles: 1 } })
  const unread = receipt('second.pdf', 0, 'application/pdf', false)
  t.match(validateUploads([receipt('a.pdf', 5), unread], settings), { error: messages.uploadLimitExceeded, data: { limit: 'maxFiles' } }, 'an unread file is not empty')
  const cut = receipt('big.pdf', 11, 'application/pdf', false)
  t.match(validateUploads([cut], settings), { data: { limit: 'maxFileSize', files: [{ name: 'big.pdf', size: 11 }] } })
  t.match(validateUploads([receipt('e.pdf', 0), cut], settings), { error: messages.emptyFile }, 'an earlier step still wins')
})

t.test('file names are counted in characters', async (t) => {
  const settings = resolveUploadSettings({ limits: { maxFilenameLength: 6 } })
  t.equal(validateUploads([receipt('😀😀.pdf', 5)], settings), undefined, 'two emoji and .pdf are six characters')
  t.match(validateUploads([receipt('😀😀😀.pdf', 5)], settings), { error: messages.fileNameTooLong })
})

t.test('upload modes and buckets', async (t) => {
  const entries: FormEntry<string>[] = [
    { kind: 'field', name: 'a', value: '1' },
    { kind: 'file', name: 'b', file: 'B1' },
    { kind: 'file', name: 'a', file: 'A1' },
    { kind: 'field', name: 'a', value: '2' },
    { kind: 'file', name: 'b', file: 'B2' },
    { kind: 'field', name: 'c', value: '3' },
    { kind: 'field', name: 'b', value: 'text' },
  ]
  t.same(findMixedKeys(entries), ['a', 'b'], 'in order of first appearance')
  t.same(checkUploadMode(entries, 'flat'), {
    ok: false,
    code: 'FA_ERR_UPLOAD_MIXED_KEYS',
    error: messages.mixedKeyTypes,
    data: { error_category: 'validation', conflicts: ['a', 'b'], hint: messages.mixedKeyTypesHint },
  })
  t.equal(checkUploadMode(entries, 'structured'), undefined)
  t.same(bucketForm(entries), { fields: { a: ['1', '2'], c: '3', b: 'text' }, files: { b: ['B1', 'B2'], a: 'A1' } })
  const proto = bucketForm<string>([{ kind: 'field', name: '__proto__', value: 'x' }])
  t.equal(Object.getPrototypeOf(proto.fields), Object.prototype)
  t.same(Object.keys(proto.fields), ['__proto__'], 'a __proto__ key stays a plain key')
})

t.test('content type rule', async (t) => {
  const action = (contentType?: string): Action => ({
    name: 'a',
    description: 'a',
    handler: () => ({ ok: true, value: null }),
    ...(contentType ? { isSpecial: { contentType } } : {}),
  })
  const enforced = resolveUploadSettings({ enforceContentType: true })
  const refused = { ok: false, code: 'FA_ERR_UNSUPPORTED_MEDIA_TYPE', error: messages.unsupportedMediaType, data: {} }
  t.equal(mediaTypeOf('Multipart/Form-Data; boundary=x'), 'multipart/form-data')
  t.equal(checkContentType(action('multipart/form-data'), 'multipart/form-data; boundary=x', enforced), undefined)
  t.same(checkContentType(action('multipart/form-data'), 'application/json', enforced), refused)
  t.same(checkContentType(action(), 'multipart/form-data; boundary=x', enforced), refused, 'no isSpecial declares JSON')
  t.equal(checkContentType(action(), 'application/problem+json', enforced), undefined)
  t.same(checkContentType(action('application/json'), undefined, enforced), refused)
  t.equal(checkContentType(action('application/json'), 'multipart/form-data', resolveUploadSettings()), undefined, 'off by default')
})
