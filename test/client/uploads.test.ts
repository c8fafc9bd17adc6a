import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { messages } from '../../lib/index.js'
import { clientErrorCodes, clientMessages, createClient, type FetchLike } from '../../lib/client/index.js'
import { clientServer, listen, type Services } from './fixtures.js'

// client.upload over a real socket and in-process: single, multiple, from a path or a Buffer,
// over the size limit, a type not allowed. The fixture server allows .txt/.pdf up to 64 bytes.

const dir = mkdtempSync(join(tmpdir(), 'fastify-actions-client-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const notePath = join(dir, 'note.txt')
writeFileSync(notePath, 'from a path')

const allowed = { mimeTypes: ['text/plain', 'application/pdf'], extensions: ['.txt', '.pdf'] }
const validation = { error_category: 'validation' }

for (const transport of ['socket', 'app.fetch'] as const) {
  t.test(`uploads over ${transport}`, async (t) => {
    const server = await clientServer()
    t.teardown(() => server.close())
    const socket = transport === 'socket'
    const baseUrl = socket ? await listen(server.app) : 'http://localhost/api'
    const client = createClient<Services>({ baseUrl, fetch: socket ? undefined : (server.app.fetch as FetchLike) })

    t.test('one File', async (t) => {
      const result = await client.upload('docs', 'attach', { files: { file: new File(['hello'], 'a.txt', { type: 'text/plain' }) }, fields: { note: 'n1' } })
      t.same(result, { ok: true, value: { note: 'n1', files: [{ name: 'a.txt', type: 'text/plain', size: 5, text: 'hello' }] } })
    })

    t.test('several files under one key: a Blob with a name, a Buffer, a path', async (t) => {
      const result = await client.upload('docs', 'attach', {
        files: {
          file: [
            { data: new Blob(['blob bytes']), name: 'b.txt' },
            { data: Buffer.from('%PDF-1.4 x'), name: 'c.pdf' },
            notePath,
            { path: notePath, name: 'renamed.txt' },
          ],
        },
        fields: { note: 'many' },
      })
      t.same(result, {
        ok: true,
        value: {
          note: 'many',
          files: [
            { name: 'b.txt', type: 'text/plain', size: 10, text: 'blob bytes' },
            { name: 'c.pdf', type: 'application/pdf', size: 10, text: '%PDF-1.4 x' },
            { name: 'note.txt', type: 'text/plain', size: 11, text: 'from a path' },
            { name: 'renamed.txt', type: 'text/plain', size: 11, text: 'from a path' },
          ],
        },
      })
    })

    t.test('UploadedFile: exactly one file', async (t) => {
      t.same(await client.upload('docs', 'single', { files: { file: { data: Buffer.from('x'), name: 'x.txt' } } }), {
        ok: true,
        value: { name: 'x.txt', type: 'text/plain', size: 1, text: '' },
      })
      const two = await client.upload('docs', 'single', { files: { file: [{ data: Buffer.from('x'), name: 'x.txt' }, { data: Buffer.from('y'), name: 'y.txt' }] } })
      t.same(two, {
        ok: false,
        error: { status: false, message: messages.validationFailed, data: { errors: [{ path: '/files/file', message: 'must be an uploaded file' }] }, httpStatus: 400 },
      })
    })

    t.test('over the size limit', async (t) => {
      const result = await client.upload('docs', 'attach', { files: { file: { data: new Uint8Array(65).fill(97), name: 'big.txt' } }, fields: { note: 'x' } })
      t.same(result, {
        ok: false,
        error: {
          status: false,
          message: messages.uploadLimitExceeded,
          data: { ...validation, limit: 'maxFileSize', max: 64, files: [{ name: 'big.txt', size: 65 }] },
          httpStatus: 400,
        },
      })
    })

    t.test('a type not allowed', async (t) => {
      const result = await client.upload('docs', 'attach', { files: { file: new File([new Uint8Array(8)], 'p.png', { type: 'image/png' }) }, fields: { note: 'x' } })
      t.same(result, {
        ok: false,
        error: {
          status: false,
          message: messages.fileTypeNotAllowed,
          data: { ...validation, rejected: [{ name: 'p.png', type: 'image/png' }], allowed },
          httpStatus: 400,
        },
      })
    })

    t.test('a path that cannot be read is an Err before any request', async (t) => {
      const result = await client.upload('docs', 'attach', { files: { file: join(dir, 'missing.txt') }, fields: { note: 'x' } })
      t.match(result, { ok: false, error: { status: false, httpStatus: 0, code: clientErrorCodes.badInput, message: /^cannot read '.*missing\.txt': ENOENT/ } })
      // @ts-expect-error not a file at all
      const wrong = await client.upload('docs', 'attach', { files: { file: 42 }, fields: { note: 'x' } })
      t.same(wrong, { ok: false, error: { status: false, message: clientMessages.notAFile, data: {}, httpStatus: 0, code: clientErrorCodes.badInput } })
    })
  })
}
