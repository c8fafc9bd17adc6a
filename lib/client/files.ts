import { clientMessages, messageOf } from './errors.js'

/**
 * A file to upload:
 * - a `File` (its own name) or a `Blob` (sent as `blob` unless wrapped with a name);
 * - `{ data, name, type? }`: bytes (a Node `Buffer`, a `Uint8Array`, an `ArrayBuffer`) or a Blob, under a name;
 * - Node only: a path string, or `{ path, name?, type? }`; the file is read when the call is made.
 */
export type FileInput =
  | Blob
  | string
  | { path: string; name?: string; type?: string }
  | { data: Blob | ArrayBuffer | ArrayBufferView; name: string; type?: string }

export interface NamedBlob {
  blob: Blob
  name: string
}

// Enough for the defaults of `uploads.allow` and the common cases; anything else is octet-stream.
const typesByExtension: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  pdf: 'application/pdf',
  zip: 'application/zip',
  json: 'application/json',
  txt: 'text/plain',
  csv: 'text/csv',
  md: 'text/markdown',
}

function typeOfName(name: string): string {
  const dot = name.lastIndexOf('.')
  return (dot >= 0 && typesByExtension[name.slice(dot + 1).toLowerCase()]) || 'application/octet-stream'
}

function baseName(path: string): string {
  return path.split(/[\\/]/).pop() || 'file'
}

const isNode = () => typeof globalThis.process?.versions?.node === 'string'

/**
 * Reads a path with `node:fs/promises`, imported only here and only in Node. The specifier is a
 * variable so that bundlers for the browser neither resolve nor include it.
 */
async function readPath(path: string): Promise<Uint8Array> {
  const specifier = 'node:fs/promises'
  const fs = (await import(/* @vite-ignore */ /* webpackIgnore: true */ specifier)) as { readFile: (path: string) => Promise<Uint8Array> }
  return fs.readFile(path)
}

function bytesOf(data: ArrayBuffer | ArrayBufferView): Uint8Array<ArrayBuffer> {
  if (data instanceof ArrayBuffer) return new Uint8Array(data)
  // A copy: the view may sit on a SharedArrayBuffer or a pooled Buffer, and Blob wants its own bytes.
  const copy = new Uint8Array(data.byteLength)
  copy.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
  return copy
}

/** The Blob and file name of one input, or why it cannot be sent. */
export async function toNamedBlob(input: FileInput): Promise<NamedBlob | { error: string }> {
  if (input instanceof Blob) {
    const name = typeof (input as File).name === 'string' ? (input as File).name : 'blob'
    return { blob: input, name }
  }
  if (typeof input === 'string' || (typeof input === 'object' && input !== null && 'path' in input)) {
    const path = typeof input === 'string' ? input : input.path
    if (!isNode()) return { error: clientMessages.pathOutsideNode(path) }
    const name = typeof input === 'string' ? baseName(path) : (input.name ?? baseName(path))
    const type = (typeof input === 'object' && input.type) || typeOfName(name)
    try {
      return { blob: new Blob([bytesOf(await readPath(path))], { type }), name }
    } catch (error) {
      return { error: clientMessages.cannotRead(path, messageOf(error)) }
    }
  }
  if (typeof input === 'object' && input !== null && 'data' in input && typeof input.name === 'string') {
    const type = input.type ?? (input.data instanceof Blob && input.data.type ? input.data.type : typeOfName(input.name))
    const blob = input.data instanceof Blob ? input.data.slice(0, input.data.size, type) : new Blob([bytesOf(input.data)], { type })
    return { blob, name: input.name }
  }
  return { error: clientMessages.notAFile }
}

