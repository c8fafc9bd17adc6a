import { createExample } from './app.js'

// `npm start` runs this file in one Node process (`node --import tsx`), so Ctrl-C and SIGTERM reach it.

const example = await createExample(process.env).catch((error: unknown) => {
  console.error(`Cannot start: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
})
const { server, host, port } = example

try {
  await server.rest.app.listen({ port, host })
} catch (error) {
  console.error(`Cannot listen on ${host}:${port}: ${error instanceof Error ? error.message : String(error)}`)
  await example.database.close()
  process.exit(1)
}
console.log(`Web page: http://${host}:${port}/assets/index.html`)
console.log(`MCP (Streamable HTTP): http://${host}:${port}/api/mcp`)
console.log(`OpenAPI document: http://${host}:${port}/api/openapi.json`)
console.log(`API reference: http://${host}:${port}/api/reference`)
// From the process's start (performance.now() counts from it): the database's set-up included.
console.log(`Answering ${Math.round(performance.now())}ms after launch`)

// SIGTERM (a deployment stopping this instance) drains first when SHUTDOWN_DRAIN_MS is set: /status
// answers 503 so the load balancer takes it out of rotation, then new connections are refused,
// requests in flight finish, the database is closed, exit 0. Ctrl-C closes at once.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    const drained = signal === 'SIGTERM' ? example.drain(example.drainMs) : Promise.resolve()
    drained.then(() => example.close()).then(
      () => process.exit(0),
      () => process.exit(1),
    )
  })
}
