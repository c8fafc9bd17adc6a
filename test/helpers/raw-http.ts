import { request } from 'node:http'

export interface RawAnswer {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
  json: any
}

/**
 * One HTTP/1.1 request over a real socket to 127.0.0.1:`port` with exactly the headers given
 * (fetch refuses to set `Host`; a DNS-rebinding page sends its own name there).
 */
export function rawRequest(port: number, options: { method?: string; path: string; headers?: Record<string, string>; body?: string; localAddress?: string }): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const headers = { ...options.headers }
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body))
    const req = request({ host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers, setHost: !('host' in headers), localAddress: options.localAddress, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let json: any
        try {
          json = JSON.parse(text)
        } catch {
          json = undefined
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json })
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(options.body)
  })
}
