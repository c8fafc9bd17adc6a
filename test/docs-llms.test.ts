/** docs/llms.txt, the index of the documentation for AI coding assistants, lists every page of docs/ and only those. */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'

const docs = join(import.meta.dirname, '..', 'docs')
const raw = 'https://raw.githubusercontent.com/fastify-actions/fastify-actions/main/docs/'

t.test('docs/llms.txt lists every docs page, each once, with a description, and no page that does not exist', async (t) => {
  const text = readFileSync(join(docs, 'llms.txt'), 'utf8')
  t.match(text, /^# fastify-actions\n\n> \S/, 'a title and a one-paragraph summary (llmstxt.org)')
  const listed = [...text.matchAll(/^- \[[^\]]+\]\(([^)]+)\): \S.*$/gm)].map((match) => match[1]!)
  t.same(listed.filter((url) => !url.startsWith(raw)), [], 'links to the raw Markdown on GitHub')
  const pages = listed.map((url) => url.slice(raw.length))
  const existing = readdirSync(docs).filter((name) => name.endsWith('.md')).sort()
  t.same(existing.filter((page) => !pages.includes(page)), [], 'every page of docs/ is listed: add a line for a new page')
  t.same(pages.filter((page) => !existing.includes(page)), [], 'every listed page exists')
  t.equal(new Set(pages).size, pages.length, 'no page twice')
})
