/**
 * OpenAPI 3.2 streams (issue 39 item 5): openapi-typescript generates the types of the example app's
 * 3.2 document (it reads 3.2, not yet `itemSchema`), and openapi-fetch with `parseAs: 'stream'` reads
 * `greetings.wave` over a real socket; the frames are parsed here: `retry:` first, each event's id,
 * name and JSON data, then `done`. It sends no `Accept: text/event-stream`: `*` / `*` streams.
 */
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { bin, exampleServer, run, scratch } from './helpers/example-openapi.js'
import { tscArgs } from './helpers/generated-clients.js'

const program = `import createClient from 'openapi-fetch'
import type { paths } from './schema.js'

const api = createClient<paths>({ baseUrl: process.argv[2] })
const answer = await api.POST('/api/services/greetings/wave', { body: { name: 'Bo', delayMs: 0 }, parseAs: 'stream' })
let text = ''
const reader = answer.data!.pipeThrough(new TextDecoderStream()).getReader()
for (;;) {
  const { done, value } = await reader.read()
  if (done) break
  text += value
}
console.log(JSON.stringify({ status: answer.response.status, type: answer.response.headers.get('content-type'), text }))
`

interface Frame {
  id?: string
  event?: string
  data?: string
  retry?: number
}

/** The fields of each frame of a `text/event-stream` body (WHATWG: one `field: value` a line, frames apart by a blank line). */
function frames(text: string): Frame[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const frame: Frame = {}
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith(':')) continue
        const colon = line.indexOf(':')
        const field = colon === -1 ? line : line.slice(0, colon)
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '')
        if (field === 'retry') frame.retry = Number(value)
        else if (field === 'data') frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`
        else if (field === 'id' || field === 'event') frame[field] = value
      }
      return frame
    })
}

const wordsOf = (name: string) => `Hello ${name}, these words arrive one at a time, as they are made.`.split(' ')

t.test('a 3.2 document: openapi-fetch with parseAs: stream reads a stream end to end', async (t) => {
  const { document, origin } = await exampleServer(t, { version: '3.2' })
  const dir = scratch(t, 'openapi-streams-fetch')
  const file = join(dir, 'openapi.json')
  writeFileSync(file, JSON.stringify(document))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  const generated = await run(bin('openapi-typescript'), [file, '-o', join(dir, 'schema.ts')], { cwd: dir, timeout: 90_000 })
  t.equal(generated.code, 0, `openapi-typescript generated types from the 3.2 document: ${generated.stderr.slice(-1000)}`)

  const source = join(dir, 'program.ts')
  writeFileSync(source, program)
  const [compiled, ran] = await Promise.all([
    run(bin('tsc'), [...tscArgs, source], { cwd: dir, timeout: 90_000 }),
    run(process.execPath, ['--import', 'tsx', source, origin], { timeout: 60_000 }),
  ])
  t.equal(compiled.stdout, '', 'the program compiles under --strict')
  t.equal(ran.code, 0, ran.stderr.slice(-1000))
  const answer = JSON.parse(ran.stdout || '{}')
  t.equal(answer.status, 200)
  t.match(answer.type, /^text\/event-stream/)
  const bo = wordsOf('Bo')
  const read = frames(answer.text ?? '')
  t.same(read[0], { retry: read[0]?.retry }, 'the stream opens with retry: alone')
  t.ok(Number.isInteger(read[0]?.retry), 'retry: is an integer (the itemSchema says so)')
  t.same(
    read.slice(1).map((frame) => ({ ...frame, data: JSON.parse(frame.data ?? 'null') })),
    [...bo.map((word, index) => ({ id: String(index), event: 'message', data: { word, index } })), { id: 'end', event: 'done', data: { status: true, message: "Action 'greetings.wave' executed", data: { words: bo.length } } }],
    'every event with its id, then done',
  )
})
