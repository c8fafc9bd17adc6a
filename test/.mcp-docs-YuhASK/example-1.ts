import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

const url = new URL(process.env.MCP_URL ?? 'http://localhost:8000/api/mcp')
const client = new Client({ name: 'my-agent', version: '1.0.0' })
await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${process.env.TOKEN ?? ''}` } } }))
const { tools } = await client.listTools()
console.log(tools.map((tool) => tool.name)) // [ 'math_add', 'math_divide' ]
console.log(await client.callTool({ name: 'math_add', arguments: { a: 2, b: 3 } })) // { content: [ { type: 'text', text: '{"sum":5}' } ] }
console.log(await client.callTool({ name: 'math_divide', arguments: { a: 1, b: 0 } })) // { content: [ { type: 'text', text: 'cannot divide by zero' } ], isError: true }
await client.close()

export {}
