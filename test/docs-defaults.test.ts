import t from 'tap'
import { readFileSync } from 'node:fs'
import { DEFAULTS } from '../lib/index.js'
import { CORE_DEFAULTS } from '../lib/config.js'
import { CORS_DEFAULTS } from '../plugins/cors-config.js'
import { REST_DEFAULTS } from '../plugins/rest-config.js'
import { STREAM_DEFAULTS } from '../plugins/stream-config.js'

/** DEFAULTS as dotted paths: `rest.bodyLimit` → 1048576; arrays are values, not branches. */
function flatten(value: object, prefix = ''): Map<string, unknown> {
  const paths = new Map<string, unknown>()
  for (const [key, entry] of Object.entries(value)) {
    const path = prefix === '' ? key : `${prefix}.${key}`
    if (typeof entry === 'object' && entry !== null && !Array.isArray(entry)) {
      for (const [inner, leaf] of flatten(entry, path)) paths.set(inner, leaf)
    } else {
      paths.set(path, entry)
    }
  }
  return paths
}

const cells = (line: string) => line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((cell) => cell.trim())

/** The rows of the defaults table of docs/server.md (columns Entry, Config path, Default), by entry. */
function documentedDefaults(markdown: string): Array<{ entry: string; path: string; value: string; line: number }> {
  const lines = markdown.split('\n')
  const start = lines.findIndex((line) => {
    const names = cells(line)
    return line.trim().startsWith('|') && names.includes('Entry') && names.includes('Config path') && names.includes('Default')
  })
  if (start === -1) return []
  const names = cells(lines[start]!)
  const [entry, path, value] = ['Entry', 'Config path', 'Default'].map((name) => names.indexOf(name)) as [number, number, number]
  const rows = []
  for (let index = start + 2; index < lines.length && lines[index]!.trim().startsWith('|'); index++) {
    const row = cells(lines[index]!)
    rows.push({ entry: row[entry]!.replace(/`/g, ''), path: row[path]!, value: row[value]!, line: index + 1 })
  }
  return rows
}

/** The first backticked span of a cell, read as a JS literal of strings, numbers, booleans and arrays. */
function literal(cell: string): unknown {
  const text = /`([^`]+)`/.exec(cell)?.[1]
  if (text === undefined) throw new Error(`no value in backticks: ${cell}`)
  return JSON.parse(text.replace(/'/g, '"'))
}

const defaults = flatten(DEFAULTS)
const rows = documentedDefaults(readFileSync(new URL('../docs/server.md', import.meta.url), 'utf8'))

t.test('docs/server.md shows every entry of DEFAULTS once, with its value', async (t) => {
  t.ok(rows.length > 0, 'the defaults table was found')
  for (const [path, value] of defaults) {
    const found = rows.filter((row) => row.entry === path)
    t.equal(found.length, 1, `${path} appears once`)
    if (found.length === 1) t.strictSame(literal(found[0]!.value), value, `${path} = ${JSON.stringify(value)}`)
  }
  for (const row of rows) t.ok(defaults.has(row.entry), `docs/server.md:${row.line}: ${row.entry} is an entry of DEFAULTS`)
})

t.test('each row names the config path that sets it', async (t) => {
  for (const row of rows) t.match(row.path, /`[a-zA-Z.]+`/, `${row.entry}: ${row.path}`)
})

t.test('DEFAULTS is assembled from the pieces that own them: the core holds no HTTP default', async (t) => {
  t.notOk('rest' in CORE_DEFAULTS, 'no rest.* (rest.port) in the core')
  t.notOk('cors' in CORE_DEFAULTS, 'no CORS headers in the core')
  t.same(Object.keys(CORE_DEFAULTS).filter((key) => typeof (CORE_DEFAULTS as Record<string, unknown>)[key] === 'object'), ['uploads'], 'the core: uploads only among the groups')
  t.equal(DEFAULTS.rest, REST_DEFAULTS, "the REST plugin's own table")
  t.equal(DEFAULTS.cors, CORS_DEFAULTS, "the CORS plugin's own table")
  t.equal(DEFAULTS.streams, STREAM_DEFAULTS, "the SSE adapter's own table")
  for (const [key, value] of Object.entries(CORE_DEFAULTS)) t.equal((DEFAULTS as Record<string, unknown>)[key], value, `core ${key}`)
})
