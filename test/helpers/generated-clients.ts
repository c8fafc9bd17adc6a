/**
 * A client generated from the example app's OpenAPI document alone, by a generator people use, calls
 * the example app over a real socket: the one endpoint `POST /api/services` (orval used to send it no
 * Content-Type: a 415) and per-action routes, a success and a refusal, with their statuses and
 * envelopes. The program compiles under `tsc --strict` against the generated code, so the types are
 * the document's. One file per generator (test/openapi-clients-*.test.ts) keeps each under tap's timeout.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { bin, exampleServer, run, scratch, type Ran } from './example-openapi.js'
import type { TapTest } from './postgres.js'

export type Generator = 'orval' | 'hey-api' | 'openapi-fetch'

/** What each program prints: the three calls' statuses and bodies. */
const report = `console.log(JSON.stringify({ endpoint, route, refused }))`

const programs: Record<Generator, string> = {
  orval: `import { greetingsHello, greetingsRefuse, services } from './orval/api.js'

const viaEndpoint = await services({ intent: 'execute', service: 'greetings', action: 'hello', payload: { name: 'Ada' } })
const endpoint = { status: viaEndpoint.status, body: viaEndpoint.data }
const viaRoute = await greetingsHello({ name: '  Bo ' })
// Typed from the action's output schema: a 200's data.data.greeting is a string.
const greeting: string | undefined = viaRoute.status === 200 ? viaRoute.data.data.greeting : undefined
const route = { status: viaRoute.status, greeting }
const viaRefuse = await greetingsRefuse({})
const refused = { status: viaRefuse.status, body: viaRefuse.data }
${report}
`,
  'hey-api': `import { client } from './hey/client.gen.js'
import { greetingsHello, greetingsRefuse, services } from './hey/sdk.gen.js'

client.setConfig({ baseUrl: process.argv[2] })
const viaEndpoint = await services({ body: { intent: 'execute', service: 'greetings', action: 'hello', payload: { name: 'Ada' } } })
const endpoint = { status: viaEndpoint.response?.status, body: viaEndpoint.data }
const viaRoute = await greetingsHello({ body: { name: '  Bo ' } })
const greeting: string | undefined = viaRoute.data?.data.greeting
const route = { status: viaRoute.response?.status, greeting }
const viaRefuse = await greetingsRefuse({ body: {} })
const refused = { status: viaRefuse.response?.status, body: viaRefuse.error }
${report}
`,
  'openapi-fetch': `import createClient from 'openapi-fetch'
import type { paths } from './schema.js'

const client = createClient<paths>({ baseUrl: process.argv[2] })
const viaEndpoint = await client.POST('/api/services', { body: { intent: 'execute', service: 'greetings', action: 'hello', payload: { name: 'Ada' } } })
const endpoint = { status: viaEndpoint.response.status, body: viaEndpoint.data }
const viaRoute = await client.POST('/api/services/greetings/hello', { body: { name: '  Bo ' } })
const greeting: string | undefined = viaRoute.data?.data.greeting
const route = { status: viaRoute.response.status, greeting }
const viaRefuse = await client.POST('/api/services/greetings/refuse', { body: {} })
const refused = { status: viaRefuse.response.status, body: viaRefuse.error }
${report}
`,
}

/** Generates the client of `generator` from `file` into `dir`. */
function generate(generator: Generator, dir: string, file: string, origin: string): Promise<Ran> {
  const options = { cwd: dir, timeout: 90_000 }
  if (generator === 'hey-api') return run(bin('openapi-ts'), ['-i', file, '-o', join(dir, 'hey'), '--no-log-file'], options)
  if (generator === 'openapi-fetch') return run(bin('openapi-typescript'), [file, '-o', join(dir, 'schema.ts')], options)
  // orval writes the origin into the client (its `baseUrl`); it reads no `servers`.
  mkdirSync(join(dir, 'orval'))
  const output = { target: join(dir, 'orval/api.ts'), client: 'fetch', mode: 'single', baseUrl: origin }
  writeFileSync(join(dir, 'orval.config.mjs'), `export default { api: { input: { target: ${JSON.stringify(file)} }, output: ${JSON.stringify(output)} } }\n`)
  return run(bin('orval'), ['--config', join(dir, 'orval.config.mjs')], options)
}

/** `tsc --strict` over one program, as a project using the generated client would compile it. */
export const tscArgs = ['--strict', '--noEmit', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--lib', 'es2022,dom,dom.iterable,dom.asynciterable']

export async function checkGeneratedClient(t: TapTest, generator: Generator): Promise<void> {
  const { document, origin } = await exampleServer(t)
  const dir = scratch(t, `openapi-client-${generator}`)
  const file = join(dir, 'openapi.json')
  writeFileSync(file, JSON.stringify(document))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  const generated = await generate(generator, dir, file, origin)
  t.equal(generated.code, 0, `${generator} generated a client: ${generated.stderr.slice(-1000)}`)

  const program = join(dir, 'program.ts')
  writeFileSync(program, programs[generator])
  // The type check and the calls at once (tsx only strips types).
  const [compiled, ran] = await Promise.all([
    run(bin('tsc'), [...tscArgs, program], { cwd: dir, timeout: 90_000 }),
    run(process.execPath, ['--import', 'tsx', program, origin], { timeout: 60_000 }),
  ])
  t.equal(compiled.stdout, '', 'the program compiles under --strict against what was generated')
  t.equal(ran.code, 0, `the program ran: ${ran.stderr.slice(-1000)}`)
  const result = JSON.parse(ran.stdout || '{}')
  t.equal(result.endpoint?.status, 200, 'the endpoint answers 200 (the body went with its Content-Type)')
  t.match(result.endpoint?.body, { status: true, message: "Action 'greetings.hello' executed", data: { greeting: 'Hello, Ada!' } }, "the endpoint's envelope")
  t.same(result.route, { status: 200, greeting: 'Hello, Bo!' }, 'the per-action route, its value typed from the output schema')
  t.same(result.refused, { status: 400, body: { status: false, message: 'This action always refuses', data: {} } }, 'a refusal is the error envelope')
}
