import { clientError, clientErrorCodes, messageOf, type ClientError } from './errors.js'
import { toNamedBlob, type NamedBlob } from './files.js'
import type { UploadInput } from './types.js'

/** The multipart form of an upload call: the call's names, then its fields, then its files; or why a file cannot be sent. */
export async function toUploadForm(service: string, action: string, input: UploadInput): Promise<FormData | ClientError> {
  const form = new FormData()
  form.append('intent', 'execute')
  form.append('service', service)
  form.append('action', action)
  for (const [name, value] of Object.entries(input?.fields ?? {})) {
    for (const item of Array.isArray(value) ? value : [value]) form.append(name, String(item))
  }
  for (const [name, value] of Object.entries(input?.files ?? {})) {
    for (const item of Array.isArray(value) ? value : [value]) {
      let file: NamedBlob | { error: string }
      try {
        file = await toNamedBlob(item)
      } catch (error) {
        file = { error: messageOf(error) }
      }
      if ('error' in file) return clientError(clientErrorCodes.badInput, file.error)
      form.append(name, file.blob, file.name)
    }
  }
  return form
}
