import { connect } from 'node:net'

export interface RawTargetAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

/**
 * Sends one HTTP/1.1 request over a new socket with the request target exactly as given (`fetch` and
 * `inject` normalise `/%61pi`, `#` and absolute-form targets away) and reads the answer to the close.
 */
export function rawTarget(port: number, method: string, target: string, headers: Record<string, string> = {}, body = ''): Promise<RawTargetAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const lines = [`${method} ${target} HTTP/1.1`, 'host: 127.0.0.1', 'connection: close']
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`)
    if (body !== '' || method === 'POST') lines.push(`content-length: ${Buffer.byteLength(body)}`)
    const chunks: Buffer[] = []
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('end', () => resolve(parseAnswer(Buffer.concat(chunks).toString('utf8'))))
    socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`)
  })
}

function parseAnswer(text: string): RawTargetAnswer {
  const split = text.indexOf('\r\n\r\n')
  const [statusLine, ...headerLines] = text.slice(0, split).split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of headerLines) {
    const colon = line.indexOf(':')
    const name = line.slice(0, colon).trim().toLowerCase()
    headers[name] = headers[name] === undefined ? line.slice(colon + 1).trim() : `${headers[name]}, ${line.slice(colon + 1).trim()}`
  }
  let body = text.slice(split + 4)
  if (headers['transfer-encoding'] === 'chunked') body = unchunk(body)
  return { status: Number(statusLine.split(' ')[1]), headers, body }
}

function unchunk(text: string): string {
  let out = ''
  let rest = text
  for (;;) {
    const line = rest.indexOf('\r\n')
    const size = parseInt(rest.slice(0, line), 16)
    if (!size) return out
    out += rest.slice(line + 2, line + 2 + size)
    rest = rest.slice(line + 2 + size + 2)
  }
}
