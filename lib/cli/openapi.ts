/** `fastify-actions openapi`: the project's OpenAPI 3.1 document, built without listening. */
import { writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { CliError } from './errors.js'
import type { Values } from './package.js'
import { buildProjectServer, openProject } from './project.js'

export async function run(values: Values): Promise<void> {
  const project = openProject(values)
  const { root } = project
  const config = await project.config()
  // The document is served for this one request: discovery on without a secret, nothing else that is not needed.
  const { server, app } = await buildProjectServer(root, config, (rest) => ({
    ...rest,
    discovery: { enabled: true },
    openapi: { ...rest.openapi, enabled: true, reference: false, path: '/openapi.json' },
    mcp: undefined,
    rateLimiting: undefined,
    enableStatic: false,
  }))
  try {
    const response = await app.inject({ method: 'GET', url: '/openapi.json' })
    if (response.statusCode !== 200) throw new CliError(`the OpenAPI document could not be built (HTTP ${response.statusCode})`)
    const document = JSON.stringify(JSON.parse(response.body), null, 2) + '\n'
    if (typeof values.out === 'string') {
      await writeFile(resolve(values.out), document)
      process.stderr.write(`OpenAPI document written to ${values.out}\n`)
    } else process.stdout.write(document)
  } finally {
    await server.close()
  }
}
