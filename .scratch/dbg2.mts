import Fastify from 'fastify'
const app = Fastify()
app.post('/api/services', async (request, reply) => {
  reply.hijack()
  const raw = reply.raw
  raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' })
  let i = 0
  const timer = setInterval(() => raw.write(`id: ${i}\nevent: message\ndata: ${i++}\n\n`), 5)
  raw.on('close', () => { clearInterval(timer); console.log('server close') })
})
app.server.on('connection', (s) => { console.log('conn', s.remotePort); s.on('close', () => console.log('conn closed', s.remotePort, s.bytesRead)) })
await app.listen({ port: 0, host: '127.0.0.1' })
const port = (app.server.address() as any).port
const c = new AbortController()
const res = await fetch(`http://127.0.0.1:${port}/api/services`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' }, signal: c.signal })
const reader = res.body!.getReader()
console.log(await reader.read())
const mode = process.argv[2]
if (mode === 'abort') c.abort()
else if (mode === 'cancel') await reader.cancel()
else { c.abort(); await reader.cancel().catch(e => console.log('cancel err', e.name)) }
await new Promise(r => setTimeout(r, 300))
const t0 = Date.now()
setTimeout(() => { console.log('still open'); process.exit(1) }, 2000).unref()
await app.close()
console.log('closed in', Date.now() - t0)
