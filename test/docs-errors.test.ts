import t from 'tap'
import { readFileSync } from 'node:fs'
import * as errors from '../lib/errors.js'
import { ACTION_FAILED, fail, failureCodes, isActionsError, thrownCodes } from '../lib/errors.js'
import { statusByCode } from '../lib/answer.js'

/** One row of a table of docs/errors.md whose first column is a code. */
interface Row {
  code: string
  status: string
  message: string
  line: number
}

/** The cells of a Markdown table line (`|` inside backticks does not occur in these tables). */
function cells(line: string): string[] {
  return line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((cell) => cell.trim())
}

/** Every row of every table that has the columns Code, HTTP and Message. */
function codeRows(markdown: string): Row[] {
  const rows: Row[] = []
  const lines = markdown.split('\n')
  for (let index = 0; index < lines.length; index++) {
    const header = lines[index]!
    if (!header.trim().startsWith('|') || !/^\s*\|[\s:|-]+\|\s*$/.test(lines[index + 1] ?? '')) continue
    const names = cells(header)
    const code = names.indexOf('Code')
    const status = names.indexOf('HTTP')
    const message = names.indexOf('Message')
    index += 2
    for (; index < lines.length && lines[index]!.trim().startsWith('|'); index++) {
      if (code === -1 || status === -1 || message === -1) continue
      const row = cells(lines[index]!)
      rows.push({ code: row[code]!.replace(/`/g, ''), status: row[status]!, message: row[message]!, line: index + 1 })
    }
  }
  return rows
}

/** The documented text (its first backticked span) as a pattern: each `<placeholder>` stands for any text. */
function patternOf(cell: string): RegExp | undefined {
  const text = /`([^`]+)`/.exec(cell)?.[1]
  if (text === undefined) return undefined
  const source = text
    .split(/<[^>]+>/)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.+')
  return new RegExp(`^${source}$`)
}

const rows = codeRows(readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8'))

// Every error class lib/errors.ts exports (@fastify/error sets `code` on the instance, not the prototype).
type ErrorClass = new (...args: string[]) => Error & { code: string }
const thrownClasses = (Object.values(errors) as unknown[]).filter(
  (value): value is ErrorClass => typeof value === 'function' && value.prototype instanceof Error,
)
const thrown = new Map(thrownClasses.map((constructor) => [new constructor().code, constructor]))

// Sample arguments for texts made by a function; a dot in each, since some placeholders read `<service>.<action>`.
const samples = ['x.1', 'x.2']

/** An error made with as many sample arguments as its template has `%s` (extra ones would be appended). */
function sampleError(constructor: ErrorClass): Error {
  const arity = (new constructor().message.match(/%s/g) ?? []).length
  return new constructor(...samples.slice(0, arity))
}
const returned = [...failureCodes, ACTION_FAILED]

// A message of every failure, made with sample arguments, by code.
const failureMessages = new Map<string, string>()
for (const make of Object.values(fail) as Array<(...args: unknown[]) => errors.Failure>) {
  const failure = make(...samples)
  // A code's first constructor carries its table text; later ones are variants (an encoded body's 400 and 415).
  if (!failureMessages.has(failure.code)) failureMessages.set(failure.code, failure.error)
}

t.test('docs/errors.md lists every code exactly once', async (t) => {
  t.ok(rows.length > 0, 'the tables were found')
  t.ok(thrown.size > 0 && [...thrown.keys()].every((code) => code.startsWith('FA_ERR_')), 'the exported error classes carry FA_ERR_ codes')
  t.same(new Set(thrownCodes), new Set(thrown.keys()), 'thrownCodes lists the exported error classes')
  const documented = rows.map((row) => row.code)
  for (const code of [...returned, ...thrown.keys()]) {
    t.equal(documented.filter((one) => one === code).length, 1, `${code} appears once`)
  }
  const known = new Set<string>([...returned, ...thrown.keys()])
  for (const row of rows) t.ok(known.has(row.code), `docs/errors.md:${row.line}: ${row.code} is a code of lib/errors.ts`)
})

t.test('the HTTP column is statusByCode for returned failures, none for thrown errors', async (t) => {
  for (const row of rows) {
    if (row.code in statusByCode) {
      t.equal(Number(row.status), statusByCode[row.code as keyof typeof statusByCode], `${row.code}: HTTP ${row.status}`)
    } else if (thrown.has(row.code)) {
      t.equal(row.status, '—', `${row.code} is thrown, not answered`)
    }
  }
})

t.test('the Message column is the text the code carries', async (t) => {
  for (const row of rows) {
    const actual = failureMessages.get(row.code) ?? (thrown.has(row.code) ? sampleError(thrown.get(row.code)!).message : undefined)
    if (actual === undefined) continue // FA_ERR_ACTION_FAILED: the handler's own text
    const pattern = patternOf(row.message)
    t.ok(pattern, `${row.code} shows its message in backticks`)
    t.match(actual, pattern!, `${row.code}: the documented text matches \`${actual}\``)
  }
})

t.test('every thrown error is recognised by isActionsError with its code', async (t) => {
  for (const [code, constructor] of thrown) {
    const error = sampleError(constructor)
    t.ok(isActionsError(error, code), code)
    t.notOk(isActionsError(error, 'FA_ERR_OTHER'), `${code} is not another code`)
  }
})
