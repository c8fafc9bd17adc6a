import type { FastifyRequest } from 'fastify'
import { createRequire } from 'node:module'
import { fail, type Failure } from '../lib/errors.js'
import { messages } from '../lib/messages.js'
import type { UploadSettings } from '../lib/uploads/config.js'
import { limitExceeded } from '../lib/uploads/validate.js'
import { MULTIPART_PART_OVERHEAD } from './config.js'

// busboy's own Content-Disposition parser (RFC 2231/5987 `filename*` decoding included), so the
// guard reads a part's name and file name exactly as the parser that @fastify/multipart runs.
const parseParams = createRequire(import.meta.url)('@fastify/busboy/lib/utils/parseParams.js') as (header: string) => Array<string | [string, string]>

/** Thrown into @fastify/multipart's iteration when the guard refuses the body: it carries the answer. */
export class MultipartRefused extends Error {
  constructor(readonly failure: Failure) {
    super(failure.error)
  }
}

export interface MultipartGuard {
  /** Parts whose headers the guard has seen (the closing delimiter is not a part). */
  readonly parts: number
  /** Stops watching (the form was read, or refused). */
  stop(): void
}

type Phase = 'preamble' | 'delimiter' | 'headers' | 'body' | 'epilogue'

const CRLFCRLF = Buffer.from('\r\n\r\n')
const LINE_BREAK = /[\r\n]/

/** The boundary of a `multipart/form-data` content type, or undefined (busboy then refuses the body). */
function boundaryOf(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined
  for (const param of parseParams(contentType).slice(1)) {
    if (Array.isArray(param) && /^boundary$/i.test(param[0])) return param[1]
  }
  return undefined
}

/** What a part's header block says: refused with a reason, or a file or a field. */
function classify(block: string): { refused: string } | { file: boolean; name: string } {
  const headers = new Map<string, string>()
  let last = ''
  for (const line of block.split('\r\n')) {
    if (line === '') continue
    // An obsolete folded line continues the previous header.
    if ((line[0] === ' ' || line[0] === '\t') && last !== '') {
      headers.set(last, `${headers.get(last)} ${line.trim()}`)
      continue
    }
    const colon = line.indexOf(':')
    if (colon <= 0) continue
    last = line.slice(0, colon).trim().toLowerCase()
    if (!headers.has(last)) headers.set(last, line.slice(colon + 1).trim())
  }
  const disposition = headers.get('content-disposition')
  if (disposition === undefined) return { refused: messages.partReasons.notFormData }
  const parsed = parseParams(disposition)
  if (typeof parsed[0] !== 'string' || !/^form-data$/i.test(parsed[0])) return { refused: messages.partReasons.notFormData }
  let name: string | undefined
  let filename: string | undefined
  for (const param of parsed.slice(1)) {
    if (!Array.isArray(param)) continue
    if (/^name$/i.test(param[0])) name = param[1]
    else if (/^filename$/i.test(param[0])) filename = param[1]
  }
  if (name !== undefined && LINE_BREAK.test(name)) return { refused: messages.partReasons.lineBreakInName }
  if (filename !== undefined && LINE_BREAK.test(filename)) return { refused: messages.partReasons.lineBreakInFilename }
  if (name === undefined || name === '') return { refused: messages.partReasons.noName }
  const type = (headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase()
  // busboy's rule for a file part.
  return { file: filename !== undefined || type === 'application/octet-stream', name }
}

/**
 * Counts the raw bytes of a multipart body as they arrive and refuses it at the limit, not after
 * the body: the whole body (`multipartLimit`), the preamble and epilogue and each part's headers
 * (MULTIPART_PART_OVERHEAD each), and a text field's value (`maxFieldSize`). busboy truncates an
 * oversized field, preamble or header silently and reads on to the end of the body; file sizes it
 * cuts itself. It also refuses, naming why, a part that busboy would skip or misfile (no name, a
 * line break in a name or decoded file name, no form-data disposition). It finds the delimiters to
 * measure what lies between them; parsing stays busboy's.
 *
 * A refusal is emitted as an `error` on the request stream, which @fastify/multipart turns into the
 * end of its iteration with that error.
 */
export function guardMultipart(request: FastifyRequest, settings: UploadSettings, multipartLimit: number): MultipartGuard {
  const raw = request.raw
  const boundary = boundaryOf(request.headers['content-type'])
  let parts = 0
  if (boundary === undefined) return { parts, stop: () => {} }
  const delimiter = Buffer.from(`\r\n--${boundary}`)
  const fieldLimit = settings.limits.maxFieldSize + delimiter.length

  let total = 0
  let phase: Phase = 'preamble'
  let spent = 0
  let isFile = false
  let partName = ''
  let header: Buffer[] = []
  let headerLength = 0
  // The first delimiter may open the body without its CRLF: scan as if one came first (busboy does).
  let pending: Buffer = Buffer.from('\r\n')
  let stopped = false

  const refuse = (failure: Failure) => {
    stop()
    if (raw.listenerCount('error') > 0) raw.emit('error', new MultipartRefused(failure))
  }

  /** Bytes of a preamble, part body or epilogue: false (after refusing) when over their bound. */
  const spend = (bytes: number): boolean => {
    spent += bytes
    if (phase === 'preamble' && spent > MULTIPART_PART_OVERHEAD) refuse(fail.multipartInvalid({ error_category: 'validation', reason: messages.multipartPreambleTooLarge }))
    else if (phase === 'epilogue' && spent > MULTIPART_PART_OVERHEAD) refuse(fail.multipartInvalid({ error_category: 'validation', reason: messages.multipartEpilogueTooLarge }))
    else if (phase === 'body' && !isFile && spent > fieldLimit) refuse(limitExceeded('maxFieldSize', settings, [], { fields: [partName] }))
    else return true
    return false
  }

  const scan = (chunk: Buffer) => {
    total += chunk.length
    if (total > multipartLimit) return refuse(fail.bodyTooLarge())
    const data = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
    pending = Buffer.alloc(0)
    let at = 0
    while (at < data.length && !stopped) {
      if (phase === 'delimiter') {
        // Two bytes decide: `--` closes the form, anything else opens a part's headers.
        if (data.length - at < 2) {
          pending = data.subarray(at)
          return
        }
        if (data[at] === 0x2d && data[at + 1] === 0x2d) {
          phase = 'epilogue'
          at += 2
        } else {
          phase = 'headers'
          parts++
          header = []
          headerLength = 0
        }
        spent = 0
        continue
      }
      if (phase === 'headers') {
        const room = MULTIPART_PART_OVERHEAD + CRLFCRLF.length - headerLength
        const piece = data.subarray(at, at + room)
        header.push(piece)
        const before = headerLength
        headerLength += piece.length
        const block = Buffer.concat(header)
        const end = block.indexOf(CRLFCRLF, Math.max(0, before - CRLFCRLF.length + 1))
        if (end < 0) {
          if (headerLength >= MULTIPART_PART_OVERHEAD + CRLFCRLF.length) return refuse(fail.multipartPartInvalid(messages.partReasons.headersTooLarge))
          header = [block]
          at += piece.length
          continue
        }
        const kind = classify(block.subarray(0, end).toString('latin1'))
        if ('refused' in kind) return refuse(fail.multipartPartInvalid(kind.refused))
        isFile = kind.file
        partName = kind.name
        phase = 'body'
        spent = 0
        at += end + CRLFCRLF.length - before
        continue
      }
      if (phase === 'epilogue') {
        spend(data.length - at)
        return
      }
      // preamble or body: up to the next delimiter.
      const found = data.indexOf(delimiter, at)
      if (found < 0) {
        // The tail may be the start of a delimiter: keep it for the next chunk.
        const keep = Math.min(delimiter.length - 1, data.length - at)
        spend(data.length - keep - at)
        pending = Buffer.from(data.subarray(data.length - keep))
        return
      }
      if (!spend(found - at)) return
      phase = 'delimiter'
      at = found + delimiter.length
    }
  }

  function stop() {
    if (stopped) return
    stopped = true
    raw.off('data', scan)
  }

  raw.on('data', scan)
  return {
    get parts() {
      return parts
    },
    stop,
  }
}
