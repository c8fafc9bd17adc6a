import type { Action } from '../action.js'
import { fail, type Failure } from '../errors.js'
import type { UploadSettings } from './config.js'

/** The media type without parameters, lower-cased: `multipart/form-data; boundary=x` → `multipart/form-data`. */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';', 1)[0].trim().toLowerCase()
}

// `application/json` and every `application/*+json` count as the one JSON type the endpoint parses.
const family = (mediaType: string) => (mediaType === 'application/json' || /^application\/[\w.+-]+\+json$/.test(mediaType) ? 'json' : mediaType)

/**
 * With `enforceContentType`, an action accepts only the request content type it declares in
 * `isSpecial.contentType`; an action without `isSpecial` declares JSON. A mismatch is a 415.
 */
export function checkContentType(action: Action, contentType: string | undefined, settings: UploadSettings): Failure | undefined {
  if (!settings.enforceContentType) return undefined
  const declared = family(mediaTypeOf(action.isSpecial?.contentType ?? 'application/json'))
  return family(mediaTypeOf(contentType)) === declared ? undefined : fail.unsupportedMediaType()
}
