import { CORE_DEFAULTS } from '../config.js'
import type { KeyTable } from '../config-keys.js'
import { ErrConfig } from '../errors.js'

export interface UploadsConfig {
  enforceContentType?: boolean
  limits?: {
    maxFiles?: number
    maxFileSize?: number
    minFileSize?: number
    maxTotalSize?: number
    maxFilenameLength?: number
    /** Text fields per form, the routing fields included (default 100). */
    maxFields?: number
    /** Bytes per text field (default 64 KiB). */
    maxFieldSize?: number
  }
  allow?: {
    mimeTypes?: string[]
    extensions?: string[]
  }
  diagnostics?: boolean
}

/** Every key of `UploadsConfig`, for the unknown-key check. */
export const UPLOADS_KEYS: KeyTable<UploadsConfig> = Object.freeze({
  enforceContentType: true,
  limits: Object.freeze({
    maxFiles: true,
    maxFileSize: true,
    minFileSize: true,
    maxTotalSize: true,
    maxFilenameLength: true,
    maxFields: true,
    maxFieldSize: true,
  } satisfies KeyTable<NonNullable<UploadsConfig['limits']>>),
  allow: Object.freeze({ mimeTypes: true, extensions: true } satisfies KeyTable<NonNullable<UploadsConfig['allow']>>),
  diagnostics: true,
})

/** The upload limits, each with its default filled in. */
export interface UploadLimits {
  maxFiles: number
  maxFileSize: number
  minFileSize: number
  maxTotalSize: number
  maxFilenameLength: number
  maxFields: number
  maxFieldSize: number
}

export type UploadLimitName = keyof UploadLimits

/** `uploads` with every default filled in, normalised once at boot. */
export interface UploadSettings {
  enforceContentType: boolean
  limits: Readonly<UploadLimits>
  /** As configured (lower-cased, extensions with their dot): echoed in `file type not allowed`. */
  allow: { readonly mimeTypes: readonly string[]; readonly extensions: readonly string[] }
  mimeTypes: ReadonlySet<string>
  extensions: ReadonlySet<string>
}

function checkLimit(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ErrConfig(`uploads.limits.${name} must be a non-negative integer, got ${String(value)}`)
  }
  return value
}

const toExtension = (value: string) => {
  const lower = value.trim().toLowerCase()
  return lower === '*' || lower.startsWith('.') ? lower : `.${lower}`
}

/** Fills in the defaults and checks the limits; throws at boot on a limit that is not a count of bytes or items. */
export function resolveUploadSettings(config: UploadsConfig = {}): UploadSettings {
  const given: Partial<UploadLimits> = config.limits ?? {}
  const limits: UploadLimits = { ...CORE_DEFAULTS.uploads.limits }
  for (const name of Object.keys(limits) as UploadLimitName[]) {
    const value = given[name]
    if (value !== undefined) limits[name] = checkLimit(name, value)
  }
  const mimeTypes = (config.allow?.mimeTypes ?? CORE_DEFAULTS.uploads.mimeTypes).map((type) => type.trim().toLowerCase())
  const extensions = (config.allow?.extensions ?? CORE_DEFAULTS.uploads.extensions).map(toExtension)
  return {
    enforceContentType: config.enforceContentType ?? CORE_DEFAULTS.uploads.enforceContentType,
    limits: Object.freeze(limits),
    allow: { mimeTypes: Object.freeze(mimeTypes), extensions: Object.freeze(extensions) },
    mimeTypes: new Set(mimeTypes),
    extensions: new Set(extensions),
  }
}
