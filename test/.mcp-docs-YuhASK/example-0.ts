import type { AddressInfo } from 'node:net'
import Type from 'typebox'
import { createAction, createServer, Err, Ok } from '/work/wt-hosts/lib/index.js'

const add = createAction({
  name: 'add',
  description: 'Adds two integers',
  validation: Type.Object({ a: Type.Integer(), b: Type.Integer() }),
  handler: (data) => Ok({ sum: data.a + data.b }),
})
const divide = createAction({
  name: 'divide',
  description: 'Divides a by b',
  validation: Type.Object({ a: Type.Number(), b: Type.Number() }),
  handler: (data) => (data.b === 0 ? Err('cannot divide by zero') : Ok({ quotient: data.a / data.b })),
})

const server = await createServer({
  serverName: 'calculator',
  services: [{ name: 'math', description: 'Arithmetic', actions: [add, divide] }],
  rest: { baseUrl: '/api', allowedOrigins: [], mcp: { enabled: true } },
})
const app = server.rest!.app
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 8000) })
const { port } = app.server.address() as AddressInfo
console.log(`MCP: http://127.0.0.1:${port}/api/mcp`)

export {}
