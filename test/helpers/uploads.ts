import type { FastifyInstance, InjectOptions } from 'fastify'
import { z } from 'zod'
import { createAction, Ok, type Service } from '../../lib/index.js'
import type { Answer } from './server.js'

// The handler's `data` typed through a Standard Schema: `{ fields, files }` with WHATWG File objects.
const fileOrFiles = z.union([z.instanceof(File), z.array(z.instanceof(File))])
export const uploadPayload = z.object({
  fields: z.record(z.string(), z.union([z.string(), z.array(z.string())])),
  files: z.record(z.string(), fileOrFiles),
})

export interface FileSummary {
  name: string
  type: string
  size: number
  text: string
}

const summarize = async (file: File): Promise<FileSummary> => ({ name: file.name, type: file.type, size: file.size, text: await file.text() })

/** What the upload actions answer: the fields as given, each file as name, type, size and text. */
async function describe({ fields, files }: z.infer<typeof uploadPayload>) {
  const described: Record<string, FileSummary | FileSummary[]> = {}
  for (const [key, value] of Object.entries(files)) {
    described[key] = Array.isArray(value) ? await Promise.all(value.map(summarize)) : await summarize(value)
  }
  return { fields, files: described }
}

export const flatUpload = createAction({
  name: 'flat',
  description: 'Flat upload (the default mode)',
  isSpecial: { contentType: 'multipart/form-data' },
  validation: uploadPayload,
  handler: async (data) => Ok(await describe(data)),
})

export const structuredUpload = createAction({
  name: 'structured',
  description: 'Structured upload',
  isSpecial: { contentType: 'multipart/form-data', uploadMode: 'structured' },
  validation: uploadPayload,
  handler: async (data) => Ok(await describe(data)),
})

export const jsonOnly = createAction({
  name: 'jsonOnly',
  description: 'Declares a JSON body',
  isSpecial: { contentType: 'application/json' },
  handler: (data) => Ok({ received: data }),
})

export const undeclared = createAction({
  name: 'undeclared',
  description: 'No isSpecial',
  validation: uploadPayload,
  handler: async (data) => Ok(await describe(data)),
})

export const filesService: Service = {
  name: 'files',
  description: 'Upload fixtures',
  actions: [flatUpload, structuredUpload, jsonOnly, undeclared],
}

export type FormValue = string | File | Array<string | File>

/** A FormData with the routing fields first, then the given entries in order. */
export function uploadForm(action: string, entries: Record<string, FormValue> = {}, routing: Record<string, string> = {}): FormData {
  const form = new FormData()
  for (const [name, value] of Object.entries({ intent: 'execute', service: 'files', action, ...routing })) form.append(name, value)
  for (const [name, value] of Object.entries(entries)) {
    for (const item of Array.isArray(value) ? value : [value]) form.append(name, item)
  }
  return form
}

export const pdf = (name = 'a.pdf', text = '%PDF-1.4 hello') => new File([text], name, { type: 'application/pdf' })
export const png = (name = 'a.png', size = 16) => new File([new Uint8Array(size).fill(7)], name, { type: 'image/png' })

/** The bytes and content type a WHATWG client sends for a FormData: what `inject` needs. */
export async function encodeForm(form: FormData): Promise<{ payload: Buffer; contentType: string }> {
  const request = new Request('http://localhost/', { method: 'POST', body: form })
  return { payload: Buffer.from(await request.arrayBuffer()), contentType: request.headers.get('content-type') ?? '' }
}

/** POSTs a multipart body to `/api/services` through `inject`. */
export async function postForm(app: FastifyInstance, form: FormData, options: Partial<InjectOptions> = {}): Promise<Answer> {
  const { payload, contentType } = await encodeForm(form)
  return postRaw(app, payload, contentType, options)
}

export async function postRaw(app: FastifyInstance, payload: string | Buffer, contentType: string, options: Partial<InjectOptions> = {}): Promise<Answer> {
  const response = await app.inject({ method: 'POST', url: '/api/services', payload, headers: { 'content-type': contentType }, ...options })
  return { statusCode: response.statusCode, headers: response.headers, body: response.json() }
}

export interface RawPart {
  name: string
  value: string | Buffer
  filename?: string
  type?: string
}

export const BOUNDARY = 'test-boundary-7MA4YWxkTrZu0gW'

/** A multipart body written by hand, for what FormData cannot express (empty file names, typed fields). */
export function rawMultipart(parts: RawPart[], boundary = BOUNDARY): Buffer {
  const chunks: Buffer[] = []
  for (const part of parts) {
    const filename = part.filename === undefined ? '' : `; filename="${part.filename}"`
    const type = part.type === undefined ? '' : `\r\nContent-Type: ${part.type}`
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${filename}${type}\r\n\r\n`))
    chunks.push(Buffer.from(part.value))
    chunks.push(Buffer.from('\r\n'))
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return Buffer.concat(chunks)
}

export const routingParts = (action: string, service = 'files'): RawPart[] => [
  { name: 'intent', value: 'execute' },
  { name: 'service', value: service },
  { name: 'action', value: action },
]
