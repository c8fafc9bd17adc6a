import Fastify from 'fastify'
import { createClient, isOk } from '/work/wt-streams-client/lib/client/index.js'
const app = Fastify()
app.post('/api/services', async (request, reply) => {
  reply.hijack()
  const raw = reply.raw
  raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' })
  let i = 0
  const timer = setInterval(() => raw.write(`id: ${i}\nevent: message\ndata: ${i++}\n\n`), 5)
  raw.on('close', () => { clearInterval(timer); raw.destroy(); console.log('server close') })
})
app.server.on('connection', (s) => { console.log('conn', s.remotePort); s.on('close', () => console.log('conn closed', s.remotePort, s.bytesRead)) })
await app.listen({ port: 0, host: '127.0.0.1' })
const port = (app.server.address() as any).port
const client = createClient({ baseUrl: `http://127.0.0.1:${port}/api` })
const r = await client.invoke<any>('w', 'forever')
if (!isOk(r)) throw 1
for await (const v of r.value) { console.log(v); if (v === 2) break }
console.log(await r.value.final)
await new Promise(r => setTimeout(r, 500)); console.log("waited")
const t0 = Date.now()
setTimeout(() => { console.log((process as any)._getActiveHandles().map((h: any) => h.constructor.name + " " + (h.remoteAddress ? h.remoteAddress + ":" + h.remotePort + "->" + h.localPort + " destroyed=" + h.destroyed : ""))) }, 2000).unref?.()
try { await app.close() } catch (e) { console.log('close err', e) }
console.log('closed in', Date.now() - t0)
