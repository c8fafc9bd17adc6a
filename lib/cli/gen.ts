/** `fastify-actions gen service|action`: new files under src/services/, registered, never overwriting. */
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { CliError, usageError } from './errors.js'
import type { Values } from './package.js'
import { checkName } from './names.js'
import { openProject } from './project.js'

/** Adds `item` at the end of the array that follows `opener` (`actions: [`), keeping its layout. */
export function appendToArray(text: string, opener: string, item: string, file: string): string {
  const start = text.indexOf(opener)
  if (start < 0) throw new CliError(`cannot find "${opener}" in ${file}: add ${item} there by hand`)
  const open = start + opener.length
  let depth = 1
  let close = open
  for (; close < text.length && depth > 0; close++) {
    if (text[close] === '[') depth++
    else if (text[close] === ']') depth--
  }
  close-- // at the matching ]
  const inner = text.slice(open, close)
  const body = inner.trimEnd()
  const after = inner.slice(body.length)
  let next: string
  if (body.trim() === '') next = item
  else if (inner.includes('\n')) {
    const indent = /\n([ \t]*)\S[^\n]*$/.exec(body)?.[1] ?? '  '
    next = `${body}${body.endsWith(',') ? '' : ','}\n${indent}${item},${after}`
  } else next = `${body}${body.endsWith(',') ? '' : ','} ${item}${after}`
  return text.slice(0, open) + next + text.slice(close)
}

/** Adds an import line after the file's last import. */
export function addImport(text: string, line: string): string {
  const imports = [...text.matchAll(/^import [^\n]*\n/gm)]
  const last = imports.at(-1)
  if (!last || last.index === undefined) return `${line}\n${text}`
  const at = last.index + last[0].length
  return text.slice(0, at) + line + '\n' + text.slice(at)
}

function actionSource(camel: string): string {
  return `import Type from 'typebox'
import { createAction, Ok } from 'fastify-actions'

export default createAction({
  name: '${camel}',
  description: 'TODO: what ${camel} does',
  validation: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }),
  output: Type.Object({ message: Type.String() }),
  handler: (data) => Ok({ message: \`${camel}: \${data.name}\` }),
})
`
}

function serviceSource(camel: string): string {
  return `import { createService } from 'fastify-actions'
import helloAction from './hello.js'

/** TODO: what the ${camel} service is for. */
export const ${camel}Service = createService({
  name: '${camel}',
  description: 'TODO: describe the ${camel} service',
  actions: [helloAction],
})
`
}

function testSource(service: string, action: string): string {
  return `import t from 'tap'
import { buildApp, call } from './helpers.js'

const app = await buildApp(t)

t.test('${service}.${action} answers', async (t) => {
  const { statusCode, body } = await call(app, '${service}', '${action}', { name: 'Ada' })
  t.equal(statusCode, 200)
  t.equal(body.status, true)
  t.same(body.data, { message: '${action}: Ada' })
})

t.test('${service}.${action} refuses a payload that fails its schema', async (t) => {
  const { statusCode, body } = await call(app, '${service}', '${action}', {})
  t.equal(statusCode, 400)
  t.equal(body.message, 'Validation failed')
})
`
}

/** Writes a new file, refusing to replace one. */
async function create(root: string, path: string, text: string): Promise<void> {
  const full = join(root, path)
  if (existsSync(full)) throw new CliError(`${path} already exists: nothing was changed`)
  await writeFile(full, text, { flag: 'wx' })
  process.stdout.write(`created ${path}\n`)
}

async function genService(root: string, name: string): Promise<void> {
  const camel = checkName('service', name)
  const indexPath = join('src', 'services', 'index.ts')
  if (!existsSync(join(root, indexPath))) throw new CliError(`${indexPath} not found: run gen in the root of a project made by fastify-actions new`)
  const folder = join('src', 'services', name)
  if (existsSync(join(root, folder))) throw new CliError(`${folder} already exists: nothing was changed`)
  const testPath = join('test', `${name}.test.ts`)
  if (existsSync(join(root, testPath))) throw new CliError(`${testPath} already exists: nothing was changed`)
  const index = await readFile(join(root, indexPath), 'utf8')
  if (new RegExp(`\\b${camel}Service\\b`).test(index)) throw new CliError(`${camel}Service is already in ${indexPath}: nothing was changed`)
  // Checked before any file is written: a failure leaves the project as it was.
  const registered = appendToArray(addImport(index, `import { ${camel}Service } from './${name}/index.js'`), 'createServices([', `${camel}Service`, indexPath)
  await mkdir(join(root, folder))
  await create(root, join(folder, 'index.ts'), serviceSource(camel))
  await create(root, join(folder, 'hello.ts'), actionSource('hello'))
  if (existsSync(join(root, 'test', 'helpers.ts'))) await create(root, testPath, testSource(camel, 'hello'))
  await writeFile(join(root, indexPath), registered)
  process.stdout.write(`registered ${camel}Service in ${indexPath}\n`)
}

async function genAction(root: string, service: string, name: string): Promise<void> {
  checkName('service', service)
  const camel = checkName('action', name)
  const servicePath = join('src', 'services', service, 'index.ts')
  if (!existsSync(join(root, servicePath))) throw new CliError(`service "${service}" not found: ${servicePath} does not exist`)
  const file = join('src', 'services', service, `${name}.ts`)
  if (existsSync(join(root, file))) throw new CliError(`${file} already exists: nothing was changed`)
  const index = await readFile(join(root, servicePath), 'utf8')
  if (new RegExp(`\\b${camel}Action\\b`).test(index)) throw new CliError(`${camel}Action is already in ${servicePath}: nothing was changed`)
  const registered = appendToArray(addImport(index, `import ${camel}Action from './${name}.js'`), 'actions: [', `${camel}Action`, servicePath)
  const serviceName = /name:\s*'([^']+)'/.exec(index)?.[1] ?? service
  const testPath = join('test', `${service}.${name}.test.ts`)
  if (existsSync(join(root, testPath))) throw new CliError(`${testPath} already exists: nothing was changed`)
  await create(root, file, actionSource(camel))
  if (existsSync(join(root, 'test', 'helpers.ts'))) await create(root, testPath, testSource(serviceName, camel))
  await writeFile(join(root, servicePath), registered)
  process.stdout.write(`registered ${camel}Action in ${servicePath}\n`)
}

export async function run(values: Values, positionals: string[]): Promise<void> {
  const [kind, ...names] = positionals
  if (kind === 'service') {
    if (names.length !== 1) throw usageError('gen service needs one name: fastify-actions gen service <name>')
    return genService(openProject(values).root, names[0])
  }
  if (kind === 'action') {
    if (names.length !== 2) throw usageError('gen action needs a service and a name: fastify-actions gen action <service> <name>')
    return genAction(openProject(values).root, names[0], names[1])
  }
  throw usageError(kind === undefined ? 'gen needs what to generate: service or action' : `cannot generate ${JSON.stringify(kind)}: use service or action`)
}
