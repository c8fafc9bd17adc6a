import t from 'tap'
import { detectMimeType } from '../lib/index.js'

const blob = (...parts: Array<number[] | string>) => new Blob(parts.map((part) => (typeof part === 'string' ? part : new Uint8Array(part))))

t.test('recognised signatures', async (t) => {
  const cases: Array<[string, Blob, string]> = [
    ['PNG', blob([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'IHDR....'), 'image/png'],
    ['JPEG', blob([0xff, 0xd8, 0xff, 0xe0], 'JFIF'), 'image/jpeg'],
    ['GIF87a', blob('GIF87a', [1, 0, 1, 0]), 'image/gif'],
    ['GIF89a', blob('GIF89a', [1, 0, 1, 0]), 'image/gif'],
    ['PDF', blob('%PDF-1.7\n%âãÏÓ'), 'application/pdf'],
    ['ZIP local file header', blob([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00]), 'application/zip'],
    ['ZIP empty archive', blob([0x50, 0x4b, 0x05, 0x06], new Array(18).fill(0)), 'application/zip'],
    ['ZIP spanned archive', blob([0x50, 0x4b, 0x07, 0x08]), 'application/zip'],
    ['WebP', blob('RIFF', [0x24, 0x00, 0x00, 0x00], 'WEBPVP8 '), 'image/webp'],
  ]
  for (const [name, content, type] of cases) t.equal(await detectMimeType(content), type, name)
})

t.test('the signature is read from the content, whatever the declared type', async (t) => {
  const file = new File([new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])], 'photo.pdf', { type: 'application/pdf' })
  t.equal(await detectMimeType(file), 'image/png')
  const large = new Blob([new Uint8Array([0xff, 0xd8, 0xff]), new Uint8Array(5 * 1024 * 1024)])
  t.equal(await detectMimeType(large), 'image/jpeg', 'a large blob: only its head matters')
})

t.test('anything else is null', async (t) => {
  const cases: Array<[string, Blob]> = [
    ['empty', new Blob([])],
    ['one byte', blob([0x89])],
    ['a PNG signature cut short', blob([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a])],
    ['JPEG cut short', blob([0xff, 0xd8])],
    ['GIF of another version', blob('GIF88a')],
    ['%PDF without its dash', blob('%PDF')],
    ['PK alone', blob('PK')],
    ['RIFF without WEBP (a WAV file)', blob('RIFF', [0x24, 0, 0, 0], 'WAVEfmt ')],
    ['RIFF cut before WEBP', blob('RIFF', [0x24, 0, 0, 0], 'WEB')],
    ['WEBP not at offset 8', blob('RIFF', [0x24, 0, 0], 'WEBP')],
    ['plain text', blob('hello world, this is text')],
  ]
  for (const [name, content] of cases) t.equal(await detectMimeType(content), null, name)
})
