import multipart, { type MultipartFile } from '@fastify/multipart'
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify'
import type { Action } from '../lib/action.js'
import { errorMessage, type Diagnostics } from '../lib/diagnostics.js'
import type { Engine } from '../lib/engine.js'
import type { ExternalRequest } from '../lib/envelope.js'
import { fail, type Failure } from '../lib/errors.js'
import { messages } from '../lib/messages.js'
import { checkExternalRequest, isExternalRequest } from '../lib/request.js'
import type { UploadLimits, UploadSettings } from '../lib/uploads/config.js'
import { checkContentType } from '../lib/uploads/content-type.js'
import { bucketForm, checkUploadMode, type FormEntry } from '../lib/uploads/form.js'
import { limitExceeded, validateUploads, type FileReceipt } from '../lib/uploads/validate.js'
import { guardMultipart, MultipartRefused } from './multipart-guard.js'
import { multipartSource } from './content-encoding.js'
import { FailureError } from './wire.js'
import { discardRest } from './unread-body.js'
import type { ActionRoute, MultipartReader, MultipartSupport } from './services.js'

export interface UploadsOptions {
  settings: UploadSettings
  /** Largest multipart body in bytes (`multipartLimitOf`: the upload limits, or `bodyLimit` when larger). */
  multipartLimit: number
  engine: Engine
  /** Already scoped by `uploads.diagnostics`. */
  diagnostics: Diagnostics
}

/** A file part as read from the stream: what the chain checks, plus its bytes. */
interface ReadFile extends FileReceipt {
  chunks: Buffer<ArrayBuffer>[]
}

interface ReadForm {
  entries: FormEntry<ReadFile>[]
  files: ReadFile[]
  /** Set when a limit or a parse error stopped the reading before the end of the body. */
  failure?: Failure
  /** The parser's error behind `failure`, for the diagnostics. */
  cause?: unknown
}

const ROUTING_FIELDS: ReadonlySet<string> = new Set(['intent', 'service', 'action'])

/**
 * Busboy's limits, from `uploads.limits`. `fileSize` and `files` are one past the configured limit,
 * so that a file beyond it is seen (and its size reported) before the reading stops.
 */
function toStreamLimits(limits: UploadLimits) {
  return {
    fileSize: limits.maxFileSize + 1,
    files: limits.maxFiles + 1,
    fields: limits.maxFields,
    fieldSize: limits.maxFieldSize,
    // Only parts that are neither a field nor a file (no form-data disposition) can reach it: a malformed body.
    parts: limits.maxFiles + limits.maxFields + 2,
  }
}

/**
 * Sets up multipart bodies on the services endpoint. The returned function runs inside the
 * services plugin's scope: @fastify/multipart is registered there and nowhere else.
 */
export function setupUploads({ settings, multipartLimit, engine, diagnostics }: UploadsOptions) {
  const limits = toStreamLimits(settings.limits)
  return {
    async register(scope: FastifyInstance): Promise<MultipartReader> {
      // An app that registered @fastify/multipart above this scope already parses multipart/form-data
      // (registering it again would fail): its parser is reused, with these limits given per request.
      if (!scope.hasContentTypeParser('multipart/form-data')) await scope.register(multipart, { limits, throwFileSizeLimit: false })
      return (request, reply, route) => readUpload(request, reply, engine, settings, multipartLimit, diagnostics, route)
    },
    /** `enforceContentType` for JSON bodies; multipart bodies are checked by the reader once it knows the action. */
    checkJson: settings.enforceContentType
      ? (action: Action, contentType: string | undefined) => checkContentType(action, contentType, settings)
      : undefined,
  } satisfies MultipartSupport
}

async function readUpload(
  request: FastifyRequest,
  reply: FastifyReply,
  engine: Engine,
  settings: UploadSettings,
  multipartLimit: number,
  diagnostics: Diagnostics,
  route?: ActionRoute,
): Promise<ExternalRequest | Failure> {
  // A client that waits for `100 Continue` with a declared length over the limit: refused before it
  // sends a byte. Others are read until a limit is met, so the answer names the limit (a field, a file).
  const waits = request.headers.expect?.toLowerCase() === '100-continue' && Number(request.headers['content-length']) > multipartLimit
  const form = waits ? { entries: [], files: [], failure: fail.bodyTooLarge() } : await readForm(request, settings, multipartLimit)
  discardRest(request, reply)
  const read = form.failure ?? toExternalRequest(form, request.headers['content-type'], engine, settings, route)
  if ('ok' in read) {
    const cause = form.cause === undefined ? '' : ` (${errorMessage(form.cause)})`
    diagnostics.info('uploads.read', `${request.method} ${request.url}: ${read.error}${cause}`, read.data)
  }
  return read
}

/** A form read to its end, as the request it names; or the refusal of its route, mode or files. */
function toExternalRequest(form: ReadForm, contentType: string | undefined, engine: Engine, settings: UploadSettings, path?: ActionRoute): ExternalRequest | Failure {
  const split = splitRoutingFields(form.entries)
  const entries = split.entries
  // A per-action route names its action in the path; routing fields in its form are ignored.
  const routing: Record<string, string | string[]> = path ? { intent: 'execute', service: path.service, action: path.action } : split.routing
  if (routing.intent === undefined || routing.service === undefined || routing.action === undefined) {
    return fail.multipartRouting()
  }
  const route = { ...routing, payload: {} }
  if (!isExternalRequest(route)) return fail.invalidRequest(checkExternalRequest(route))

  if (route.intent !== 'execute') {
    const secret = entries.find((entry) => entry.kind === 'field' && entry.name === 'discoverySecret')
    return { ...route, payload: secret?.kind === 'field' ? { discoverySecret: secret.value } : {} }
  }
  // The endpoint answers a wildcard itself.
  if (route.service === '*' || route.action === '*') return route
  const found = engine.getAction(route.service, route.action)
  if (!found.ok) return found

  const refused =
    checkContentType(found.value, contentType, settings) ??
    checkUploadMode(entries, found.value.isSpecial?.uploadMode ?? 'flat') ??
    validateUploads(form.files, settings)
  if (refused) return refused

  const withFiles = entries.map((entry) => (entry.kind === 'file' ? { ...entry, file: toFile(entry.file) } : entry))
  return { ...route, payload: { ...bucketForm(withFiles) } }
}

/** The routing fields (a repeated one becomes an array, which the request check refuses) and the other entries. */
function splitRoutingFields(all: FormEntry<ReadFile>[]) {
  const routing: Record<string, string | string[]> = {}
  const entries: FormEntry<ReadFile>[] = []
  for (const entry of all) {
    if (entry.kind === 'field' && ROUTING_FIELDS.has(entry.name)) {
      const seen = routing[entry.name]
      routing[entry.name] = seen === undefined ? entry.value : [seen, entry.value].flat()
    } else {
      entries.push(entry)
    }
  }
  return { routing, entries }
}

/**
 * The file's bytes copied once into memory of its own, then handed to the File. Node's Blob copies
 * every part it is given (`part.buffer.slice(...)` in lib/internal/blob.js, Node 20 to 24) and keeps
 * the copy; `new File(chunks)` paid that per chunk (one allocation each), about twice the cost of one
 * `Buffer.concat`. Here the copy is ours, in one buffer of exactly the file's length that nothing else
 * references, and its `slice` of the whole range answers with the buffer itself, so the Blob takes it
 * without copying it again. Should Node copy by other means, it still gets the same bytes.
 */
function toFile({ chunks, name, type }: ReadFile): File {
  let length = 0
  for (const chunk of chunks) length += chunk.length
  const bytes = Buffer.allocUnsafeSlow(length)
  let at = 0
  for (const chunk of chunks) {
    bytes.set(chunk, at)
    at += chunk.length
  }
  return new File([handOver(bytes)], name, { type })
}

/** Lets a Blob take `bytes` (the whole of its own ArrayBuffer) instead of a copy of them; see toFile. */
function handOver(bytes: Buffer<ArrayBuffer>): Buffer<ArrayBuffer> {
  const buffer = bytes.buffer
  if (bytes.byteOffset !== 0 || bytes.byteLength !== buffer.byteLength) return bytes
  Object.defineProperty(buffer, 'slice', { configurable: true, value: sliceOrSelf })
  return bytes
}

function sliceOrSelf(this: ArrayBuffer, start?: number, end?: number): ArrayBuffer {
  return start === 0 && end === this.byteLength ? this : ArrayBuffer.prototype.slice.call(this, start, end)
}

/**
 * Reads the parts in order. Files are collected in memory up to the limits; a limit crossed while
 * streaming stops the reading at once (the rest of the body is never parsed or kept).
 */
async function readForm(request: FastifyRequest, settings: UploadSettings, multipartLimit: number): Promise<ReadForm> {
  const { limits } = settings
  const form: ReadForm = { entries: [], files: [] }
  let total = 0
  let received = 0
  // An upload sent with Content-Encoding is read decoded: the limits count the decoded bytes.
  const source = multipartSource(request, multipartLimit)
  const guard = guardMultipart(request, settings, multipartLimit, source.stream)
  // @fastify/multipart reads `request.raw`: it is handed the decoded stream in its place.
  const reading = source.stream === request.raw ? request : (Object.create(request, { raw: { value: source.stream } }) as FastifyRequest)
  const stop = (failure: Failure, cause?: unknown) => Object.assign(form, { failure, cause })
  const stopAtFile = (limit: 'maxFiles' | 'maxFileSize' | 'maxTotalSize') =>
    stop(validateUploads(form.files, settings) ?? limitExceeded(limit, settings, form.files))
  try {
    // The options are given per request too, for a host's own @fastify/multipart (whose types omit `throwFileSizeLimit`, which it reads).
    for await (const part of reading.parts({ limits: toStreamLimits(limits), throwFileSizeLimit: false } as Parameters<FastifyRequest['parts']>[0])) {
      received++
      // The guard refuses a nameless part from its headers; this holds should a part slip past it.
      if (typeof part.fieldname !== 'string' || part.fieldname === '') {
        if (part.type === 'file') part.file.destroy()
        return stop(fail.multipartPartInvalid(messages.partReasons.noName))
      }
      if (part.type === 'field') {
        if (part.valueTruncated) return stop(limitExceeded('maxFieldSize', settings, [], { fields: [part.fieldname] }))
        form.entries.push({ kind: 'field', name: part.fieldname, value: fieldText(part.value) })
        continue
      }
      const file: ReadFile = { name: part.filename ?? '', type: part.mimetype, size: 0, complete: false, chunks: [] }
      if (hasControlCharacters(file.name)) {
        part.file.destroy()
        return stop(fail.uploadFilenameInvalid({ files: [{ name: file.name, size: 0 }] }))
      }
      // A named file beyond the count is not read at all.
      if (file.name !== '' && form.files.length >= limits.maxFiles) {
        part.file.destroy()
        form.files.push(file)
        return stopAtFile('maxFiles')
      }
      const cut = await collect(part.file, file, limits.maxTotalSize - total)
      total += file.size
      // A file input left empty: browsers send it with no file name and no bytes.
      if (file.name === '' && file.size === 0 && !cut) continue
      form.files.push(file)
      form.entries.push({ kind: 'file', name: part.fieldname, file })
      if (cut) return stopAtFile(cut)
    }
    // busboy skips a part it cannot file (a malformed disposition): the guard saw its headers.
    if (guard.parts > received) return stop(fail.multipartPartInvalid(messages.partReasons.dropped))
    return form
  } catch (error) {
    return stop(readFailure(error, form.files, settings), error)
  } finally {
    guard.stop()
    source.close()
  }
}

/**
 * C0 and C1 controls (NUL, CR, LF, ESC, DEL…) and the bidirectional overrides that make
 * `invoice\u202Egnp.exe` display as `invoice.exe.png`: a name with any of them is refused whole.
 */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/

function hasControlCharacters(name: string): boolean {
  return CONTROL_CHARACTERS.test(name)
}

/** A field part's text. @fastify/multipart parses a part declared `application/json`; give it back as text. */
function fieldText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/**
 * Collects one file's bytes. Resolves with the limit that cut it off, if any: `maxFileSize` from
 * busboy's `fileSize` limit, `maxTotalSize` when the bytes of all files pass `budget`.
 */
function collect(stream: MultipartFile['file'], file: ReadFile, budget: number): Promise<'maxFileSize' | 'maxTotalSize' | undefined> {
  return new Promise((resolve, reject) => {
    const settle = (cut?: 'maxFileSize' | 'maxTotalSize') => {
      detach()
      if (cut) stream.destroy()
      resolve(cut)
    }
    const onData = (chunk: Buffer<ArrayBuffer>) => {
      file.size += chunk.length
      if (file.size > budget) return settle('maxTotalSize')
      file.chunks.push(chunk)
    }
    const onLimit = () => {
      file.size = Math.max(file.size, stream.bytesRead)
      settle('maxFileSize')
    }
    const onEnd = () => {
      file.complete = true
      settle()
    }
    // A body that ends inside a part destroys the part's stream, possibly before it is read.
    const onEndedEarly = () => {
      detach()
      reject(stream.errored ?? new Error('the file part ended before its end'))
    }
    const detach = () => {
      stream.off('data', onData).off('limit', onLimit).off('end', onEnd).off('error', onEndedEarly).off('close', onEndedEarly)
    }
    if (stream.destroyed) return onEndedEarly()
    // Busboy may pass the limit (and emit `limit`) before this reader is attached.
    if (stream.truncated) return onLimit()
    stream.on('data', onData).on('limit', onLimit).on('end', onEnd).on('error', onEndedEarly).on('close', onEndedEarly)
  })
}

/** @fastify/multipart's errors: its limits keep the envelope of the limit; anything else is a malformed body. */
function readFailure(error: unknown, files: readonly FileReceipt[], settings: UploadSettings): Failure {
  if (error instanceof MultipartRefused || error instanceof FailureError) return error.failure
  switch ((error as { code?: unknown }).code) {
    case 'FST_FILES_LIMIT':
      return validateUploads(files, settings) ?? limitExceeded('maxFiles', settings, files)
    case 'FST_FIELDS_LIMIT':
      return limitExceeded('maxFields', settings)
    case 'FST_PROTO_VIOLATION':
      return fail.multipartInvalid({ error_category: 'validation', hint: messages.reservedFieldName })
    default:
      return fail.multipartInvalid()
  }
}
