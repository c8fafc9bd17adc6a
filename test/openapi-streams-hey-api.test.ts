/**
 * OpenAPI 3.2 streams (issue 39 item 5): the example app with `rest.openapi.version: '3.2'` documents
 * `greetings.wave`'s events as `itemSchema`; @hey-api/openapi-ts generates a client from that document
 * alone, and its SSE client reads the stream end to end over a real socket, its events typed (hey-api
 * 0.99 ignores `itemSchema`, so its config carries the patch docs/openapi.md gives: each stream's
 * `schema` is the union of its events' `contentSchema`). The program compiles under `tsc --strict`
 * only if the events are typed (an `unknown` value has no `word`). It sends no
 * `Accept: text/event-stream`: `*` / `*` streams. openapi-fetch: test/openapi-streams-fetch.test.ts.
 */
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { bin, exampleServer, run, scratch } from './helpers/example-openapi.js'
import { tscArgs } from './helpers/generated-clients.js'

/** hey-api's config: the document, and the patch that types each stream's values from its itemSchema. */
const heyConfig = (input: string, output: string) => `export default {
  input: ${JSON.stringify(input)},
  output: ${JSON.stringify(output)},
  parser: {
    patch: {
      // hey-api yields each event's parsed \`data\`: type it as the union of the events' contentSchema.
      input: (spec) => {
        for (const item of Object.values(spec.paths ?? {})) {
          for (const operation of Object.values(item ?? {})) {
            const media = operation?.responses?.['200']?.content?.['text/event-stream']
            if (media?.itemSchema?.oneOf) media.schema = { anyOf: media.itemSchema.oneOf.map((branch) => branch.properties.data.contentSchema) }
          }
        }
      },
    },
  },
}
`

const program = `import { client } from './hey/client.gen.js'
import { greetingsWave } from './hey/sdk.gen.js'

client.setConfig({ baseUrl: process.argv[2] })
// Each value is one event's data, typed: a message ({ word, index }), then the done envelope.
const heard: Array<{ event?: string; id?: string }> = []
const { stream } = await greetingsWave({
  body: { name: 'Ada', delayMs: 0 },
  sseMaxRetryAttempts: 1,
  onSseEvent: (event) => {
    if (event.data !== undefined) heard.push({ event: event.event, id: event.id })
  },
})
const words: string[] = []
const indexes: number[] = []
let done: { status: boolean; message: string; data: Record<string, unknown> } | undefined
for await (const data of stream) {
  if ('word' in data) {
    words.push(data.word)
    indexes.push(data.index)
  } else {
    done = { status: data.status, message: data.message, data: data.data }
  }
}
console.log(JSON.stringify({ words, indexes, heard, done }))
`

const wordsOf = (name: string) => `Hello ${name}, these words arrive one at a time, as they are made.`.split(' ')

t.test('a 3.2 document: a hey-api client reads a stream end to end, its events typed', async (t) => {
  const { document, origin } = await exampleServer(t, { version: '3.2' })
  t.equal(document.openapi, '3.2.0')
  const media = document.paths['/api/services/greetings/wave'].post.responses['200'].content['text/event-stream']
  t.same(Object.keys(media), ['itemSchema'], 'the stream is described by its itemSchema alone')
  t.same(media.itemSchema.oneOf.map((branch: { properties: { event: { const: string } } }) => branch.properties.event.const), ['message', 'done', 'error'])

  const dir = scratch(t, 'openapi-streams-hey')
  const file = join(dir, 'openapi.json')
  writeFileSync(file, JSON.stringify(document))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  writeFileSync(join(dir, 'openapi-ts.config.mjs'), heyConfig(file, join(dir, 'hey')))
  const generated = await run(bin('openapi-ts'), ['-f', join(dir, 'openapi-ts.config.mjs'), '--no-log-file'], { cwd: dir, timeout: 90_000 })
  t.equal(generated.code, 0, `hey-api generated a client from the 3.2 document: ${generated.stderr.slice(-1000)}`)

  const source = join(dir, 'program.ts')
  writeFileSync(source, program)
  const [compiled, ran] = await Promise.all([
    run(bin('tsc'), [...tscArgs, source], { cwd: dir, timeout: 90_000 }),
    run(process.execPath, ['--import', 'tsx', source, origin], { timeout: 60_000 }),
  ])
  t.equal(compiled.stdout, '', 'the program compiles under --strict: the events are typed')
  t.equal(ran.code, 0, ran.stderr.slice(-1000))
  const heard = JSON.parse(ran.stdout || '{}')
  const ada = wordsOf('Ada')
  t.same(heard.words, ada, 'every word, in order')
  t.same(heard.indexes, ada.map((_, index) => index))
  t.same(heard.done, { status: true, message: "Action 'greetings.wave' executed", data: { words: ada.length } }, 'the final done envelope')
  t.same(heard.heard, [...ada.map((_, index) => ({ event: 'message', id: String(index) })), { event: 'done', id: 'end' }], 'the event names and ids')
})
