import type { FastifyInstance, InjectOptions } from 'fastify'

export type FetchFunction = (input: Request | string | URL, init?: RequestInit) => Promise<Response>

const nullBodyStatus = new Set([101, 103, 204, 205, 304])

/**
 * A WHATWG `fetch` over `app.inject`: a Request in, a Response out, no socket.
 * A relative URL or bare path is resolved against `http://localhost`.
 */
export function createFetch(app: FastifyInstance): FetchFunction {
  return async function fetch(input, init) {
    const request = input instanceof Request && init === undefined ? input : new Request(toUrl(input), init)
    const url = new URL(request.url)
    const headers: Record<string, string> = {}
    for (const [name, value] of request.headers) headers[name] = value
    const options: InjectOptions = {
      method: request.method as InjectOptions['method'],
      url: url.pathname + url.search,
      headers,
      authority: url.host,
    }
    if (request.body !== null) options.payload = Buffer.from(await request.arrayBuffer())
    const response = await app.inject(options)

    const responseHeaders = new Headers()
    for (const [name, value] of Object.entries(response.headers)) {
      if (value === undefined) continue
      if (Array.isArray(value)) for (const item of value) responseHeaders.append(name, item)
      else responseHeaders.set(name, String(value))
    }
    const raw = response.rawPayload
    const body =
      nullBodyStatus.has(response.statusCode) || request.method === 'HEAD'
        ? null
        : new Uint8Array(raw.buffer as ArrayBuffer, raw.byteOffset, raw.byteLength)
    return new Response(body, { status: response.statusCode, statusText: response.statusMessage, headers: responseHeaders })
  }
}

function toUrl(input: Request | string | URL): string | URL | Request {
  if (typeof input === 'string' && input.startsWith('/')) return `http://localhost${input}`
  return input
}
