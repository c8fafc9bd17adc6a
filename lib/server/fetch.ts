import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'

export type FetchFunction = (input: Request | string | URL, init?: RequestInit) => Promise<Response>

const nullBodyStatus = new Set([101, 103, 204, 205, 304])

/**
 * A WHATWG `fetch` over `app.inject`: a Request in, a Response out, no socket.
 * A relative URL or bare path is resolved against `http://localhost`.
 */
export function createFetch(app: FastifyInstance): FetchFunction {
  return async function fetch(input, init) {
    const direct = input instanceof Request ? undefined : injectOptionsOf(input, init ?? {})
    return direct ? toResponse(await app.inject(direct), direct.method) : viaRequest(input, init)
  }

  async function viaRequest(input: Request | string | URL, init: RequestInit | undefined): Promise<Response> {
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
    return toResponse(await app.inject(options), request.method)
  }
}

function toResponse(response: LightMyRequestResponse, method: string | undefined): Response {
  const body = nullBodyStatus.has(response.statusCode) || method === 'HEAD' ? null : byteStreamOf(response.rawPayload)
  const answer = new Response(body, { status: response.statusCode, statusText: response.statusMessage })
  // Filled in place: a `Headers` passed in `init` would be built, then copied entry by entry.
  const responseHeaders = answer.headers
  const injected = response.headers
  for (const name in injected) {
    const value = injected[name]
    if (value === undefined) continue
    if (Array.isArray(value)) for (const item of value) responseHeaders.append(name, item)
    else responseHeaders.set(name, String(value))
  }
  return answer
}

/**
 * The body as the byte stream `new Response(bytes)` would make, but filled and closed up front: a
 * Response over a byte source builds the same kind of stream and fills it on the first read, a pull
 * and a microtask later. The bytes are copied, as `new Response` copies them: enqueueing transfers
 * (detaches) the buffer, and the payload's may be shared.
 */
function byteStreamOf(raw: Buffer): ReadableStream<Uint8Array> {
  return new ReadableStream({
    type: 'bytes',
    start(controller) {
      if (raw.byteLength > 0) controller.enqueue(new Uint8Array(raw))
      controller.close()
    },
  })
}

const directKeys = new Set(['method', 'headers', 'body'])
// WHATWG "normalize a method" upper-cases these six only; `new Request` refuses the forbidden three.
const upperCasedMethods = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT'])
const forbiddenMethods = new Set(['CONNECT', 'TRACE', 'TRACK'])
const methodToken = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/**
 * The inject options of the common call, `fetch(url, { method?, headers?, body? })` with no body or a
 * string or byte body, read exactly as `new Request` would read them but without building one: its
 * body stream costs as much as the inject itself. Anything else (a FormData, Blob, URLSearchParams or
 * stream body, other init fields, an input `new Request` would refuse) answers undefined and goes
 * through `new Request`, which then also throws its own errors.
 */
function injectOptionsOf(input: string | URL, init: RequestInit): (InjectOptions & { method: string }) | undefined {
  for (const key in init) if (!directKeys.has(key)) return undefined
  const given = init.method ?? 'GET'
  if (typeof given !== 'string' || !methodToken.test(given)) return undefined
  const upper = given.toUpperCase()
  // A forbidden method throws, and a lower-case `patch` warns: both are `new Request`'s to do.
  if (forbiddenMethods.has(upper) || (given !== upper && !upperCasedMethods.has(upper))) return undefined
  const method = upperCasedMethods.has(upper) ? upper : given
  const { body } = init
  let payload: Buffer | undefined
  let defaultType: string | undefined
  if (body !== undefined && body !== null) {
    if (method === 'GET' || method === 'HEAD') return undefined
    if (typeof body === 'string') {
      payload = Buffer.from(body, 'utf8')
      defaultType = 'text/plain;charset=UTF-8'
    } else if (body instanceof ArrayBuffer) {
      payload = Buffer.from(new Uint8Array(body)) // a copy, as `new Request` takes one
    } else if (ArrayBuffer.isView(body) && body.buffer instanceof ArrayBuffer) {
      payload = Buffer.from(new Uint8Array(body.buffer, body.byteOffset, body.byteLength))
    } else {
      return undefined
    }
  }
  let path: string
  let authority: string
  const simple = typeof input === 'string' ? simpleUrl.exec(input) : null
  if (simple !== null) {
    path = simple[1]
    authority = 'localhost'
  } else {
    let url: URL
    try {
      url = new URL(toUrl(input))
    } catch {
      return undefined
    }
    if (url.username !== '' || url.password !== '') return undefined
    path = url.pathname + url.search
    authority = url.host
  }
  let headers = simpleHeaders(init.headers)
  if (headers === undefined) {
    const headerList = new Headers(init.headers)
    headers = {}
    for (const [name, value] of headerList) headers[name] = value
  }
  if (defaultType !== undefined && headers['content-type'] === undefined) headers = withHeader(headers, 'content-type', defaultType)
  return { method, url: path, headers, authority, payload }
}

/**
 * A bare path or an `http://localhost` URL that `new URL` would hand back unchanged: no dot segment,
 * no percent-escape in the path, nothing to encode, no fragment, no empty query. Answers the path
 * and query; anything else is parsed by `new URL`.
 */
const simpleUrl = /^(?:http:\/\/localhost)?(\/(?![.\/])(?:[\w\-~!$&'()*+,;=:@]|\/(?!\.)|\.)*(?:\?[\w\-.~!$&()*+,;=:@\/?%]+)?)$/

const headerName = /^[a-z0-9!#$%&'*+\-.^_`|~]+$/
// Printable ASCII with no leading or trailing space: what `Headers` keeps as it is.
const headerValue = /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/

/**
 * A plain-object `headers` whose names are lower-case tokens and whose values `Headers` would keep
 * unchanged, copied in the order `Headers` iterates (sorted by name). Anything else (other casing,
 * padding, non-ASCII, non-string values, arrays, a Headers) answers undefined and goes through `Headers`.
 */
function simpleHeaders(given: HeadersInit | undefined): Record<string, string> | undefined {
  if (given === undefined) return {}
  if (given === null || typeof given !== 'object') return undefined
  const proto = Object.getPrototypeOf(given)
  if (proto !== Object.prototype && proto !== null) return undefined
  const record = given as Record<string, unknown>
  if (Object.getOwnPropertySymbols(record).length > 0) return undefined
  const entries = Object.entries(record)
  for (const [name, value] of entries) {
    if (typeof value !== 'string' || !headerName.test(name) || !headerValue.test(value)) return undefined
  }
  entries.sort(byName)
  const headers: Record<string, string> = {}
  for (const [name, value] of entries) headers[name] = value as string
  return headers
}

const byName = (a: [string, unknown], b: [string, unknown]) => (a[0] < b[0] ? -1 : 1)

/** `headers` with one more, kept in sorted order as `Headers` would iterate it. */
function withHeader(headers: Record<string, string>, name: string, value: string): Record<string, string> {
  const names = [...Object.keys(headers), name].sort()
  const sorted: Record<string, string> = {}
  for (const key of names) sorted[key] = key === name ? value : headers[key]
  return sorted
}

function toUrl<T extends Request | string | URL>(input: T): T | string {
  if (typeof input === 'string' && input.startsWith('/')) return `http://localhost${input}`
  return input
}
