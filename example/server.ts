import { createServer } from '../lib/index.js'
import { greetings } from './services/greetings.js'

const port = Number(process.env.PORT ?? 8000)
const host = process.env.HOST ?? '127.0.0.1'

const server = await createServer({
  serverName: 'fastify-actions example',
  runtime: 'node',
  services: [greetings],
  diagnostics: process.env.DIAGNOSTICS === '1',
  rest: {
    baseUrl: '/api',
    host,
    port,
    allowedOrigins: ['http://localhost:3000'],
    enableStatus: true,
    discovery: { enabled: true },
  },
})

await server.rest!.app.listen({ port, host })

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    )
  })
}
