import { extname } from 'node:path'
import { fail, type Failure } from '../errors.js'
import type { UploadLimitName, UploadSettings } from './config.js'

/** What the chain knows of one uploaded file: its file name, declared type and size. */
export interface FileReceipt {
  name: string
  /** The part's declared Content-Type, lower-cased, without parameters. */
  type: string
  /** Bytes received; a lower bound when `complete` is false. */
  size: number
  /** False when a limit stopped the reading inside this file (or before its first byte). */
  complete: boolean
}

export type UploadCheck = (files: readonly FileReceipt[], settings: UploadSettings) => Failure | undefined

const sizes = (files: readonly FileReceipt[]) => files.map(({ name, size }) => ({ name, size }))

/** `upload limit exceeded` for one named limit. */
export function limitExceeded(limit: UploadLimitName, settings: UploadSettings, files: readonly FileReceipt[] = [], extra: Record<string, unknown> = {}): Failure {
  return fail.uploadLimit({ limit, max: settings.limits[limit], files: sizes(files), ...extra })
}

// File names are counted in characters (code points), as the limit's documentation says.
const nameLength = (name: string) => [...name].length

export const checkFilenameLength: UploadCheck = (files, { limits }) => {
  const tooLong = files.filter((file) => nameLength(file.name) > limits.maxFilenameLength)
  if (tooLong.length === 0) return undefined
  return fail.uploadFilenameLength({ limit: 'maxFilenameLength', max: limits.maxFilenameLength, files: sizes(tooLong) })
}

// A file cut off by a limit was not read to its end: its size says nothing about emptiness.
export const checkNotEmpty: UploadCheck = (files) => {
  const empty = files.filter((file) => file.complete && file.size === 0)
  return empty.length === 0 ? undefined : fail.uploadEmptyFile({ files: sizes(empty) })
}

export const checkMinSize: UploadCheck = (files, { limits }) => {
  const small = files.filter((file) => file.complete && file.size < limits.minFileSize)
  if (small.length === 0) return undefined
  return fail.uploadTooSmall({ limit: 'minFileSize', min: limits.minFileSize, files: sizes(small) })
}

export const checkFileCount: UploadCheck = (files, settings) =>
  files.length > settings.limits.maxFiles ? limitExceeded('maxFiles', settings, files) : undefined

export const checkFileSize: UploadCheck = (files, settings) => {
  const large = files.filter((file) => file.size > settings.limits.maxFileSize)
  return large.length === 0 ? undefined : limitExceeded('maxFileSize', settings, large)
}

export const checkTotalSize: UploadCheck = (files, settings) => {
  const total = files.reduce((sum, file) => sum + file.size, 0)
  return total > settings.limits.maxTotalSize ? limitExceeded('maxTotalSize', settings, files) : undefined
}

function allowedType(type: string, allowed: ReadonlySet<string>): boolean {
  if (allowed.has(type) || allowed.has('*/*')) return true
  const slash = type.indexOf('/')
  return slash > 0 && allowed.has(`${type.slice(0, slash)}/*`)
}

const allowedExtension = (name: string, allowed: ReadonlySet<string>) => allowed.has('*') || allowed.has(extname(name).toLowerCase())

export const checkFileType: UploadCheck = (files, settings) => {
  const rejected = files.filter((file) => !allowedType(file.type, settings.mimeTypes) || !allowedExtension(file.name, settings.extensions))
  if (rejected.length === 0) return undefined
  return fail.uploadType({
    rejected: rejected.map(({ name, type }) => ({ name, type })),
    allowed: { mimeTypes: settings.allow.mimeTypes, extensions: settings.allow.extensions },
  })
}

/** The specification's order; the first failure wins. */
export const uploadChain: readonly UploadCheck[] = [
  checkFilenameLength,
  checkNotEmpty,
  checkMinSize,
  checkFileCount,
  checkFileSize,
  checkTotalSize,
  checkFileType,
]

/**
 * Runs the chain over the files of one request. A request cut off by a limit while streaming is
 * checked with what was read: the cut-off file's size (past its limit) makes its own step fail,
 * unless an earlier step already does.
 */
export function validateUploads(files: readonly FileReceipt[], settings: UploadSettings): Failure | undefined {
  for (const check of uploadChain) {
    const failed = check(files, settings)
    if (failed) return failed
  }
  return undefined
}
