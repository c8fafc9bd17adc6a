import t from 'tap'
import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const page = readFileSync(join(root, 'docs/mcp.md'), 'utf8')
/** The page's TypeScript examples, importing the package from this checkout. */
const blocks = [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1].replaceAll("from 'fastify-actions'", `from '${join(root, 'lib/index.js')}'`))

t.test('docs/mcp.md: the examples type-check and run (the server, then the client against it)', async (t) => {
  t.equal(blocks.length, 2, 'a server example and a client example')
  // Inside the checkout so that the examples resolve this project's node_modules.
  const dir = mkdtempSync(join(root, 'test/.mcp-docs-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const files = blocks.map((code, i) => {
    const file = join(dir, `example-${i}.ts`)
    writeFileSync(file, `${code}\nexport {}\n`)
    return file
  })

  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })
  const program = ts.createProgram(files, { ...config!.options, noEmit: true })
  const errors = files.flatMap((file) => ts.getPreEmitDiagnostics(program, program.getSourceFile(file)))
  t.same(
    errors.map((error) => ts.flattenDiagnosticMessageText(error.messageText, '\n')),
    [],
    'no type errors',
  )

  const server = spawn(process.execPath, ['--import', 'tsx', files[0]], { cwd: root, env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => server.kill())
  const url = await new Promise<string>((resolveUrl, reject) => {
    let out = ''
    server.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const found = /MCP: (http:\/\/\S+)/.exec(out)
      if (found) resolveUrl(found[1])
    })
    server.on('exit', (code) => reject(new Error(`the server example exited (${code}): ${out}`)))
  })
  const printed = await new Promise<string>((resolveOut, reject) => {
    execFile(process.execPath, ['--import', 'tsx', files[1]], { cwd: root, env: { ...process.env, MCP_URL: url }, timeout: 30_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolveOut(stdout),
    )
  })
  t.match(printed, "[ 'math_add', 'math_divide' ]")
  t.match(printed, `text: '{"sum":5}'`)
  t.match(printed, /content: \[ \{ type: 'text', text: 'cannot divide by zero' \} \],\s+isError: true/)
})
