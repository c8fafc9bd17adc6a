/** Tables of a run: plain text for stdout, Markdown for docs/benchmarks.md, and the targets of issue 6. */
import type { BenchResults, MicroResult, ServerResult, WorkloadResult } from './results.js'

const fixed = (value: number | null | undefined, digits = 2) => (value === null || value === undefined ? '-' : value.toFixed(digits))
const whole = (value: number | null | undefined) => (value === null || value === undefined ? '-' : Math.round(value).toLocaleString('en-US'))

function ratio(value: number | null, base: number | null): string {
  if (value === null || base === null || base === 0) return '-'
  return `${(value / base).toFixed(2)}×`
}

interface Row {
  cells: string[]
}

function workloadRows(workload: WorkloadResult): Row[] {
  const bare = workload.servers.find((server) => server.name === 'fastify-bare')
  return workload.servers.map((server) => ({
    cells: [
      workload.name,
      server.name,
      server.skipped ? `skipped: ${server.skipped}` : whole(server.reqPerSec),
      ratio(server.reqPerSec, bare?.reqPerSec ?? null),
      fixed(server.p50Ms),
      fixed(server.p99Ms),
      ratio(server.p99Ms, bare?.p99Ms ?? null),
      fixed(server.cpuUsPerReq, 1),
      fixed(server.rssIdleMiB, 1),
      fixed(server.rssMiB, 1),
    ],
  }))
}

const HEAD = ['workload', 'server', 'req/s', 'req/s vs bare', 'p50 ms', 'p99 ms', 'p99 vs bare', 'CPU µs/req', 'RSS idle MiB', 'RSS load MiB']
const MICRO_HEAD = ['registered actions', 'boot ms', 'engine.executeAction µs/call', 'app.inject µs/call']

function textTable(head: string[], rows: string[][]): string {
  const widths = head.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i].length)))
  const line = (cells: string[]) => cells.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ')
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n')
}

function markdownTable(head: string[], rows: string[][]): string {
  const align = head.map((_, i) => (i < 2 ? '---' : '---:'))
  return [head, align, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n')
}

const microRows = (micro: MicroResult) =>
  micro.dispatch.map((row) => [whole(row.actions), fixed(row.bootMs, 0), fixed(row.executeActionUs), fixed(row.injectUs)])

function find(results: BenchResults, workload: string, server: string): ServerResult | undefined {
  return results.workloads.find((w) => w.name === workload)?.servers.find((s) => s.name === server)
}

/** The targets of issue 6, measured (never asserted in tests). */
export function targets(results: BenchResults): string[] {
  const lines: string[] = []
  const verdict = (ok: boolean | null) => (ok === null ? 'n/a ' : ok ? 'met ' : 'MISS')
  const fa = find(results, 'execute-small', 'fastify-actions')
  const bare = find(results, 'execute-small', 'fastify-bare')
  const have = (s?: ServerResult) => s?.reqPerSec != null
  if (have(fa) && have(bare)) {
    const r = fa!.reqPerSec! / bare!.reqPerSec!
    lines.push(`${verdict(r >= 0.85)} execute-small: fastify-actions at ${r.toFixed(2)}× fastify-bare req/s (target ≥ 0.85×)`)
    const p = fa!.p99Ms! / bare!.p99Ms!
    lines.push(`${verdict(p <= 1.5)} execute-small: fastify-actions p99 at ${p.toFixed(2)}× fastify-bare (target ≤ 1.5×)`)
    for (const peer of ['moleculer', 'hono-zod']) {
      const other = find(results, 'execute-small', peer)
      if (have(other)) {
        lines.push(`${verdict(fa!.reqPerSec! > other!.reqPerSec!)} execute-small: fastify-actions ${whole(fa!.reqPerSec)} vs ${peer} ${whole(other!.reqPerSec)} req/s (target: ahead)`)
      }
    }
  }
  const hooks = find(results, 'execute-hooks', 'fastify-actions')
  if (have(fa) && have(hooks)) {
    const r = hooks!.reqPerSec! / fa!.reqPerSec!
    lines.push(`${verdict(r >= 0.85)} execute-hooks at ${r.toFixed(2)}× execute-small req/s (target within 15 %)`)
  }
  if (results.micro && 'fetchVsInject' in results.micro) {
    const { ratio, ratioUnread } = results.micro.fetchVsInject
    lines.push(`${verdict(ratioUnread >= 0.7)} app.fetch at ${ratioUnread.toFixed(2)}× app.inject calls/s, bodies unread (target ≥ 0.7×)`)
    lines.push(`${verdict(ratio >= 0.7)} app.fetch + text() at ${ratio.toFixed(2)}× app.inject + .body calls/s (target ≥ 0.7×)`)
  }
  return lines
}

function machineLine(results: BenchResults): string {
  const { machine: m, settings: s } = results
  return (
    `${m.cpus} cores (${m.cpuModel}), ${m.totalMemMiB} MiB, ${m.platform}, Node ${m.node}; ` +
    `load average ${m.loadAverageStart.map((v) => v.toFixed(2)).join(' / ')} at start, ${m.loadAverageEnd.map((v) => v.toFixed(2)).join(' / ')} at end; ` +
    `${m.pinned ? 'server on core 0, load generator on core 1 (taskset)' : 'not pinned'}; ` +
    `${s.rounds} round(s) × ${s.durationSec} s after ${s.warmupSec} s warm-up, ${s.connections} connections (${s.uploadConnections} for uploads); ${m.date}`
  )
}

export function renderText(results: BenchResults): string {
  const rows = results.workloads.flatMap(workloadRows).map((row) => row.cells)
  const out = [`Machine: ${machineLine(results)}`, '', textTable(HEAD, rows)]
  const notes = results.workloads.flatMap((w) => w.servers.flatMap((s) => (s.notes ?? []).map((note) => `  ${w.name} / ${s.name}: ${note}`)))
  if (notes.length > 0) out.push('', 'Notes:', ...notes)
  if (results.micro && 'dispatch' in results.micro) {
    const f = results.micro.fetchVsInject
    out.push('', textTable(MICRO_HEAD, microRows(results.micro)))
    out.push('', `app.inject ${whole(f.injectOnlyPerSec)} calls/s, app.fetch ${whole(f.fetchOnlyPerSec)} calls/s (${f.ratioUnread.toFixed(2)}×); reading the body: ${whole(f.injectPerSec)} vs ${whole(f.fetchPerSec)} calls/s (${f.ratio.toFixed(2)}×)`)
  } else if (results.micro) out.push('', `micro-benchmark failed: ${results.micro.error}`)
  out.push('', 'Targets:', ...targets(results).map((line) => `  ${line}`))
  return out.join('\n')
}

export function renderMarkdown(results: BenchResults): string {
  const rows = results.workloads.flatMap(workloadRows).map((row) => row.cells)
  const out = [`Machine: ${machineLine(results)}.`, '', markdownTable(HEAD, rows)]
  const notes = results.workloads.flatMap((w) => w.servers.flatMap((s) => (s.notes ?? []).map((note) => `- ${w.name} / ${s.name}: ${note}`)))
  if (notes.length > 0) out.push('', 'Notes of the run:', '', ...notes)
  if (results.micro && 'dispatch' in results.micro) {
    const f = results.micro.fetchVsInject
    out.push('', markdownTable(MICRO_HEAD, microRows(results.micro)))
    out.push(
      '',
      `In one process: \`app.inject\` ${whole(f.injectOnlyPerSec)} calls/s, \`app.fetch\` ${whole(f.fetchOnlyPerSec)} calls/s (${f.ratioUnread.toFixed(2)}×); ` +
        `reading the body (\`.body\`, \`text()\`): ${whole(f.injectPerSec)} vs ${whole(f.fetchPerSec)} calls/s (${f.ratio.toFixed(2)}×).`,
    )
  }
  out.push('', 'Targets of issue 6 (measured, not asserted):', '', ...targets(results).map((line) => `- ${line}`))
  return out.join('\n')
}
