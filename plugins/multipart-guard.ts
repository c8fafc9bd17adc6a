import type { FastifyRequest } from 'fastify'
import { createRequire } from 'node:module'
import type { Readable } from 'node:stream'
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

const CRLF = Buffer.from('\r\n')
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

const EMPTY = Buffer.alloc(0)

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
export function guardMultipart(request: FastifyRequest, settings: UploadSettings, multipartLimit: number, source: Readable = request.raw): MultipartGuard {
  const boundary = boundaryOf(request.headers['content-type'])
  if (boundary === undefined) return { parts: 0, stop: () => {} }
  const scanner = new MultipartScanner(source, boundary, settings, multipartLimit)
  source.on('data', scanner.scan)
  return {
    get parts() {
      return scanner.parts
    },
    stop: () => scanner.stop(),
  }
}

/**
 * The guard's state machine over the raw chunks: one method per phase, each taking the data and the
 * offset it starts at and returning where the next phase starts, or undefined when this chunk is done.
 */
class MultipartScanner {
  /** Parts whose headers were seen. */
  parts = 0
  private readonly delimiter: Buffer
  private readonly fieldLimit: number
  private total = 0
  private phase: Phase = 'preamble'
  /** Bytes of the current preamble, part body or epilogue. */
  private spent = 0
  private isFile = false
  private partName = ''
  private header: Buffer[] = []
  private headerLength = 0
  /** Fewer than the two bytes after a delimiter that say what follows, when a chunk ended there (rare and small). */
  private pending: Buffer = EMPTY
  /**
   * The end of a preamble or part body that may begin a delimiter: checked against the next chunk's
   * start. The first delimiter may open the body without its CRLF: scan as if one came first (busboy
   * does), counted with the preamble as before, and found through the same small window.
   */
  private tail: Buffer = CRLF
  /** Where a kept tail is copied: allocated once, not per chunk. */
  private readonly tailStore: Buffer
  /** A kept tail and the next chunk's first delimiter length of bytes, side by side. */
  private readonly window: Buffer
  private stopped = false

  constructor(
    private readonly raw: Readable,
    boundary: string,
    private readonly settings: UploadSettings,
    private readonly multipartLimit: number,
  ) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`)
    this.fieldLimit = settings.limits.maxFieldSize + this.delimiter.length
    this.tailStore = Buffer.allocUnsafe(this.delimiter.length)
    this.window = Buffer.allocUnsafe(2 * this.delimiter.length)
  }

  /** The request's `data` listener. */
  readonly scan = (chunk: Buffer): void => {
    this.total += chunk.length
    if (this.total > this.multipartLimit) return this.refuse(fail.bodyTooLarge())
    let data = chunk
    let at: number | undefined = 0
    if (this.tail.length > 0 && chunk.length >= this.delimiter.length) at = this.acrossChunks(chunk)
    else if (this.pending.length > 0 || this.tail.length > 0) {
      // Rare and small (a phase that ended mid-chunk, or a chunk shorter than a delimiter): join them.
      data = Buffer.concat([this.pending, this.tail, chunk])
      this.pending = EMPTY
      this.tail = EMPTY
    }
    while (at !== undefined && at < data.length && !this.stopped) at = this.step(data, at)
  }

  /**
   * A delimiter may straddle two chunks: look for it in the kept tail plus the new chunk's first
   * bytes only, so a large body is never copied. Returns where scanning the chunk goes on.
   */
  private acrossChunks(chunk: Buffer): number | undefined {
    const tail = this.tail
    this.tail = EMPTY
    tail.copy(this.window, 0)
    chunk.copy(this.window, tail.length, 0, this.delimiter.length)
    const found = this.window.subarray(0, tail.length + this.delimiter.length).indexOf(this.delimiter)
    if (found < 0 || found >= tail.length) return this.spend(tail.length) ? 0 : undefined
    if (!this.spend(found)) return undefined
    this.phase = 'delimiter'
    return found + this.delimiter.length - tail.length
  }

  stop(): void {
    if (this.stopped) return
    this.stopped = true
    this.raw.off('data', this.scan)
  }

  private step(data: Buffer, at: number): number | undefined {
    if (this.phase === 'delimiter') return this.afterDelimiter(data, at)
    if (this.phase === 'headers') return this.partHeaders(data, at)
    if (this.phase === 'epilogue') return this.epilogue(data, at)
    return this.untilDelimiter(data, at)
  }

  /** Preamble or part body: up to the next delimiter. */
  private untilDelimiter(data: Buffer, at: number): number | undefined {
    const found = data.indexOf(this.delimiter, at)
    if (found < 0) {
      // The tail may be the start of a delimiter: keep it for the next chunk.
      const keep = Math.min(this.delimiter.length - 1, data.length - at)
      if (!this.spend(data.length - keep - at)) return undefined
      data.copy(this.tailStore, 0, data.length - keep)
      this.tail = this.tailStore.subarray(0, keep)
      return undefined
    }
    if (!this.spend(found - at)) return undefined
    this.phase = 'delimiter'
    return found + this.delimiter.length
  }

  /** Two bytes decide: `--` closes the form, anything else opens a part's headers. */
  private afterDelimiter(data: Buffer, at: number): number | undefined {
    if (data.length - at < 2) {
      this.pending = data.subarray(at)
      return undefined
    }
    if (data[at] === 0x2d && data[at + 1] === 0x2d) {
      this.phase = 'epilogue'
      at += 2
    } else {
      this.phase = 'headers'
      this.parts++
      this.header = []
      this.headerLength = 0
    }
    this.spent = 0
    return at
  }

  /** A part's header block, up to its blank line and at most MULTIPART_PART_OVERHEAD bytes. */
  private partHeaders(data: Buffer, at: number): number | undefined {
    const room = MULTIPART_PART_OVERHEAD + CRLFCRLF.length - this.headerLength
    const piece = data.subarray(at, at + room)
    const before = this.headerLength
    // A block that starts in this chunk is read in place; one that began in an earlier chunk is joined.
    let block = piece
    if (before > 0) {
      this.header.push(piece)
      block = Buffer.concat(this.header)
    }
    this.headerLength += piece.length
    const end = block.indexOf(CRLFCRLF, Math.max(0, before - CRLFCRLF.length + 1))
    if (end < 0) {
      if (this.headerLength >= MULTIPART_PART_OVERHEAD + CRLFCRLF.length) return this.refuse(fail.multipartPartInvalid(messages.partReasons.headersTooLarge))
      this.header = [before > 0 ? block : Buffer.from(piece)]
      return at + piece.length
    }
    const kind = classify(block.subarray(0, end).toString('latin1'))
    if ('refused' in kind) return this.refuse(fail.multipartPartInvalid(kind.refused))
    this.isFile = kind.file
    this.partName = kind.name
    this.phase = 'body'
    this.spent = 0
    return at + end + CRLFCRLF.length - before
  }

  /** After the closing delimiter: counted, never read. */
  private epilogue(data: Buffer, at: number): undefined {
    this.spend(data.length - at)
    return undefined
  }

  /** Bytes of a preamble, part body or epilogue: false (after refusing) when over their bound. */
  private spend(bytes: number): boolean {
    this.spent += bytes
    const over = this.spent > MULTIPART_PART_OVERHEAD
    if (this.phase === 'preamble' && over) this.refuse(fail.multipartInvalid({ error_category: 'validation', reason: messages.multipartPreambleTooLarge }))
    else if (this.phase === 'epilogue' && over) this.refuse(fail.multipartInvalid({ error_category: 'validation', reason: messages.multipartEpilogueTooLarge }))
    else if (this.phase === 'body' && !this.isFile && this.spent > this.fieldLimit) this.refuse(limitExceeded('maxFieldSize', this.settings, [], { fields: [this.partName] }))
    else return true
    return false
  }

  /** Stops scanning and hands the refusal to @fastify/multipart's iteration as a stream error. */
  private refuse(failure: Failure): undefined {
    this.stop()
    if (this.raw.listenerCount('error') > 0) this.raw.emit('error', new MultipartRefused(failure))
    return undefined
  }
}
