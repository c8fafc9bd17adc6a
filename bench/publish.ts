/**
 * Publishing the committed result files: the chart (docs/benchmarks.svg, Node 26 and Node 24 side by
 * side) and the generated results section of docs/benchmarks.md (every result file side by side). A
 * complete `bench/run.ts` run calls it after writing its own file; `npx tsx bench/publish.ts` does it
 * alone (after editing a result file by hand, or merging another runtime's file).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { renderSideBySide } from './report.js'
import { REFERENCE_MAJORS, type BenchResults, type Run } from './results.js'
import { renderSvg } from './svg.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const RESULTS_DIR = join(ROOT, 'bench/results')
/** bench/results/latest.json (Node 26), bench/results/node<major>.json (any other). */
export const RESULT_NAME = /^(?:latest|node\d+)\.json$/

/** Replaces the part of docs/benchmarks.md between `<!-- name:start -->` and `<!-- name:end -->`. */
function replaceSection(root: string, name: string, content: string): void {
  const page = join(root, 'docs/benchmarks.md')
  if (!existsSync(page)) return
  const text = readFileSync(page, 'utf8')
  const start = `<!-- ${name}:start -->`
  const end = `<!-- ${name}:end -->`
  const from = text.indexOf(start)
  const to = text.indexOf(end)
  if (from === -1 || to === -1) return
  writeFileSync(page, `${text.slice(0, from + start.length)}\n${content}\n${text.slice(to)}`)
}

/** Every committed result file, the reference runtimes first (Node 26, Node 24), then the others, newest major first. */
export function committedRuns(root = ROOT): Run[] {
  const dir = join(root, 'bench/results')
  const runs = readdirSync(dir)
    .filter((name) => RESULT_NAME.test(name))
    .map((name): Run => {
      const results = JSON.parse(readFileSync(join(dir, name), 'utf8')) as BenchResults
      const major = Number(results.machine.node.replace(/^v/, '').split('.')[0])
      return { label: `Node ${major}`, major, file: `bench/results/${name}`, results }
    })
  const rank = (run: Run) => {
    const i = (REFERENCE_MAJORS as readonly number[]).indexOf(run.major)
    return i === -1 ? REFERENCE_MAJORS.length + 100 - run.major : i
  }
  return runs.sort((a, b) => rank(a) - rank(b))
}

/**
 * The chart (Node 26 and Node 24 side by side; another runtime only when neither exists) and the
 * results section (every result file side by side, Node 20 for information), from every result file.
 */
export function publishDocs(root = ROOT): void {
  const runs = committedRuns(root)
  const reference = runs.filter((run) => (REFERENCE_MAJORS as readonly number[]).includes(run.major))
  writeFileSync(join(root, 'docs/benchmarks.svg'), renderSvg(reference.length > 0 ? reference : runs.slice(0, 1)))
  replaceSection(root, 'results', renderSideBySide(runs))
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  publishDocs()
  process.stdout.write(`docs/benchmarks.svg and docs/benchmarks.md (results) from ${committedRuns().map((r) => r.file).join(', ')}\n`)
}
