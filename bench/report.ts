/**
 * Tables of a run: plain text for stdout, Markdown for docs/benchmarks.md, the targets of issue 29,
 * the scaling curves, and the side-by-side report of the result files (Node 26, Node 24, Node 20).
 */
import type { BenchResults, BootCurvePoint, CurveResults, LoadCurvePoint, MicroResult, Run, ServerResult, WorkloadResult } from './results.js'
import { BASELINE_OF } from './shared.js'

const fixed = (value: number | null | undefined, digits = 2) => (value === null || value === undefined ? '-' : value.toFixed(digits))
const whole = (value: number | null | undefined) => (value === null || value === undefined ? '-' : Math.round(value).toLocaleString('en-US'))

type FetchVsInject = MicroResult['fetchVsInject']

/** The floor of a standard Response over app.inject, when the run measured it. */
function floorSentence(f: FetchVsInject, markdown: boolean): string {
  if (f.floorPerSec === undefined || f.floorRatio === undefined) return ''
  const [response, text] = markdown ? ['`Response`', '`text()`'] : ['Response', 'text()']
  return `; the smallest standard ${response} over the same inject, and its ${text}: ${whole(f.floorPerSec)} calls/s (${f.floorRatio.toFixed(2)}×)`
}

function floorNote(results: BenchResults): string {
  const f = results.micro && 'fetchVsInject' in results.micro ? results.micro.fetchVsInject : undefined
  return f?.floorRatio === undefined ? '' : `; the smallest standard Response over app.inject: ${f.floorRatio.toFixed(2)}×`
}

function ratio(value: number | null, base: number | null): string {
  if (value === null || base === null || base === 0) return '-'
  return `${(value / base).toFixed(2)}×`
}

interface Row {
  cells: string[]
}

function workloadRows(workload: WorkloadResult): Row[] {
  // `vs bare` divides by fastify-bare, or by the workload's own baseline (mcp-call: the SDK's own server).
  const baseline = BASELINE_OF[workload.name] ?? 'fastify-bare'
  const bare = workload.servers.find((server) => server.name === baseline)
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

/** A table with the first `left` columns aligned left, the others right. */
function textTable(head: string[], rows: string[][], left = 2): string {
  const widths = head.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i].length)))
  const line = (cells: string[]) => cells.map((cell, i) => (i < left ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ')
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n')
}

function markdownTable(head: string[], rows: string[][], left = 2): string {
  const align = head.map((_, i) => (i < left ? '---' : '---:'))
  return [head, align, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n')
}

const microRows = (micro: MicroResult) =>
  micro.dispatch.map((row) => [whole(row.actions), fixed(row.bootMs, 0), fixed(row.executeActionUs), fixed(row.injectUs)])

function find(results: BenchResults, workload: string, server: string): ServerResult | undefined {
  return results.workloads.find((w) => w.name === workload)?.servers.find((s) => s.name === server)
}

export interface Target {
  /** What is compared and the bound, without the measured value (the row of the Node versions table). */
  name: string
  /** What is compared, with the measured value. */
  text: string
  /** The measured ratio (or null for the "ahead of" lines, which compare req/s). */
  value: number | null
  /** null when it could not be measured in this run. */
  ok: boolean | null
  /** What the side-by-side table shows after the verdict when the target is not a ratio (`+12.3 MiB`). */
  cell?: string
}

const have = (s?: ServerResult) => s?.reqPerSec != null

/** The targets of issue 29 (bench's own same-run ratios, medians over rounds), measured, never asserted in tests. */
export function targetList(results: BenchResults): Target[] {
  const list: Target[] = []
  const ratioTarget = (name: string, text: (r: string) => string, value: number | null, ok: (r: number) => boolean) =>
    list.push({ name, text: text(value === null ? '-' : value.toFixed(2)), value, ok: value === null ? null : ok(value) })
  const of = (workload: string, server: string, field: 'reqPerSec' | 'p99Ms' | 'rssMiB' | 'rssIdleMiB'): number | null => {
    const row = find(results, workload, server)
    return have(row) ? row![field] : null
  }
  const divide = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? null : a / b)
  const vsBare = (workload: string, field: 'reqPerSec' | 'p99Ms' | 'rssMiB') => divide(of(workload, 'fastify-actions', field), of(workload, 'fastify-bare', field))
  ratioTarget(
    'execute-small req/s ≥ 1.05× fastify-bare',
    (r) => `execute-small req/s: fastify-actions at ${r}× fastify-bare (target ≥ 1.05×, issue 45)`,
    vsBare('execute-small', 'reqPerSec'),
    (r) => r >= 1.05,
  )
  ratioTarget(
    'execute-output req/s ≥ 1.05× fastify-bare',
    (r) => `execute-output req/s: fastify-actions at ${r}× fastify-bare, same response schema (target ≥ 1.05×, issue 45)`,
    vsBare('execute-output', 'reqPerSec'),
    (r) => r >= 1.05,
  )
  ratioTarget(
    'execute-small p99 ≤ 1.0× fastify-bare',
    (r) => `execute-small p99: fastify-actions at ${r}× fastify-bare (target ≤ 1.0×, issue 45)`,
    vsBare('execute-small', 'p99Ms'),
    (r) => r <= 1.0,
  )
  ratioTarget(
    'execute-small peak RSS ≤ 1.20× fastify-bare',
    (r) => `execute-small peak RSS under load: fastify-actions at ${r}× fastify-bare (target ≤ 1.20×)`,
    vsBare('execute-small', 'rssMiB'),
    (r) => r <= 1.2,
  )
  const idleFa = of('execute-small', 'fastify-actions', 'rssIdleMiB')
  const idleBare = of('execute-small', 'fastify-bare', 'rssIdleMiB')
  const idle = idleFa === null || idleBare === null ? null : idleFa - idleBare
  list.push({
    name: 'idle RSS ≤ fastify-bare + 15 MiB',
    text: `execute-small idle RSS after boot: fastify-actions ${idle === null ? '-' : `${idle >= 0 ? '+' : ''}${idle.toFixed(1)}`} MiB over fastify-bare (target ≤ +15 MiB)`,
    value: null,
    ok: idle === null ? null : idle <= 15,
    ...(idle === null ? {} : { cell: `${idle >= 0 ? '+' : ''}${idle.toFixed(1)} MiB` }),
  })
  ratioTarget(
    'upload-1mb req/s ≥ 0.90× fastify-bare',
    (r) => `upload-1mb req/s: fastify-actions at ${r}× fastify-bare with @fastify/multipart (target ≥ 0.90×)`,
    vsBare('upload-1mb', 'reqPerSec'),
    (r) => r >= 0.9,
  )
  ratioTarget(
    'app.fetch + text() ≥ 0.80× app.inject + .body',
    (r) => `app.fetch + text() at ${r}× app.inject + .body calls/s (target ≥ 0.80×${floorNote(results)})`,
    results.micro && 'fetchVsInject' in results.micro ? results.micro.fetchVsInject.ratio : null,
    (r) => r >= 0.8,
  )
  const fetchMicro = results.micro && 'fetchVsInject' in results.micro ? results.micro.fetchVsInject : undefined
  ratioTarget(
    'app.fetch + text() ≥ 0.95× the standard-Response floor',
    (r) =>
      `app.fetch + text() at ${r}× the smallest standard Response over app.inject + text() (${whole(fetchMicro?.fetchPerSec)} vs ${whole(fetchMicro?.floorPerSec)} calls/s; target ≥ 0.95×, issue 45)`,
    fetchMicro?.floorPerSec ? fetchMicro.fetchPerSec / fetchMicro.floorPerSec : null,
    (r) => r >= 0.95,
  )
  const cpuOf = (workload: string, server: string) => {
    const row = find(results, workload, server)
    return have(row) ? row!.cpuUsPerReq : null
  }
  ratioTarget(
    'mcp-call req/s ≥ 1.2× the MCP SDK server',
    (r) => `mcp-call req/s: fastify-actions at ${r}× the MCP SDK's own stateless server (target ≥ 1.2×, issue 45)`,
    divide(of('mcp-call', 'fastify-actions', 'reqPerSec'), of('mcp-call', 'mcp-sdk', 'reqPerSec')),
    (r) => r >= 1.2,
  )
  ratioTarget(
    'mcp-call CPU per call ≤ 1.0× the MCP SDK server',
    (r) => `mcp-call CPU µs per call: fastify-actions at ${r}× the MCP SDK's own server (${fixed(cpuOf('mcp-call', 'fastify-actions'), 1)} vs ${fixed(cpuOf('mcp-call', 'mcp-sdk'), 1)}; target ≤ 1.0×, issue 45)`,
    divide(cpuOf('mcp-call', 'fastify-actions'), cpuOf('mcp-call', 'mcp-sdk')),
    (r) => r <= 1.0,
  )
  ratioTarget(
    'execute-idempotent req/s vs execute-small (cost of a key)',
    (r) => `execute-idempotent req/s at ${r}× execute-small, both fastify-actions: what an Idempotency-Key costs (no target)`,
    divide(of('execute-idempotent', 'fastify-actions', 'reqPerSec'), of('execute-small', 'fastify-actions', 'reqPerSec')),
    () => true,
  )
  ratioTarget(
    'execute-compress req/s ≥ 1.0× fastify-bare with @fastify/compress',
    (r) => `execute-compress req/s (Accept-Encoding sent, answer under the threshold): fastify-actions at ${r}× fastify-bare with @fastify/compress (no target; for the record)`,
    vsBare('execute-compress', 'reqPerSec'),
    () => true,
  )
  ratioTarget(
    'execute-hooks req/s ≥ 0.92× execute-small',
    (r) => `execute-hooks req/s at ${r}× execute-small, both fastify-actions (target ≥ 0.92×)`,
    divide(of('execute-hooks', 'fastify-actions', 'reqPerSec'), of('execute-small', 'fastify-actions', 'reqPerSec')),
    (r) => r >= 0.92,
  )
  const point = (curve: 'payload' | 'connections', label: string) => results.curves?.[curve]?.find((p) => p.label === label)?.ratio
  ratioTarget(
    '1,000 connections req/s ≥ 0.95× fastify-bare',
    (r) => `connections curve at 1,000 connections: req/s at ${r}× fastify-bare (target ≥ 0.95×)`,
    point('connections', '1000 connections')?.reqPerSec ?? null,
    (r) => r >= 0.95,
  )
  ratioTarget(
    '1,000 connections peak RSS ≤ 1.10× fastify-bare',
    (r) => `connections curve at 1,000 connections: peak RSS at ${r}× plain fastify-bare (target ≤ 1.10×, round 3)`,
    point('connections', '1000 connections')?.rssMiB ?? null,
    (r) => r <= 1.1,
  )
  ratioTarget(
    '1,000 connections peak RSS ≤ 1.05× fastify-bare with TypeBox',
    (r) => `connections curve at 1,000 connections: peak RSS at ${r}× fastify-bare with TypeBox loaded (the target of issue 45 reads this one: ≤ 1.05×)`,
    point('connections', '1000 connections')?.rssMiBVsTypebox ?? null,
    (r) => r <= 1.05,
  )
  for (const label of ['64 KiB', '1 MiB']) {
    ratioTarget(
      `payload ${label} req/s ≥ 0.92× fastify-bare`,
      (r) => `payload curve at ${label}: req/s at ${r}× fastify-bare (target ≥ 0.92×)`,
      point('payload', label)?.reqPerSec ?? null,
      (r) => r >= 0.92,
    )
  }
  const fa = of('execute-small', 'fastify-actions', 'reqPerSec')
  for (const peer of ['moleculer', 'hono-zod']) {
    const other = of('execute-small', peer, 'reqPerSec')
    if (fa !== null && other !== null) {
      list.push({ name: `execute-small req/s ahead of ${peer}`, text: `execute-small: fastify-actions ${whole(fa)} vs ${peer} ${whole(other)} req/s (target: ahead)`, value: null, ok: fa > other })
    }
  }
  return list
}

const verdict = (ok: boolean | null) => (ok === null ? 'n/a ' : ok ? 'met ' : 'MISS')

/** The targets of issue 29 as lines: `met  …`, `MISS …`, `n/a  …` (not measured in this run). */
export function targets(results: BenchResults): string[] {
  return targetList(results).map((t) => `${verdict(t.ok)} ${t.text}`)
}

function machineLine(results: BenchResults): string {
  const { machine: m, settings: s } = results
  return (
    `${m.cpus} cores (${m.cpuModel}), ${m.totalMemMiB} MiB, ${m.platform}, Node ${m.node}; ` +
    `load average ${m.loadAverageStart.map((v) => v.toFixed(2)).join(' / ')} at start, ${m.loadAverageEnd.map((v) => v.toFixed(2)).join(' / ')} at end; ` +
    `${m.pinned ? 'server on core 0, load generator on core 1 (taskset)' : 'not pinned'}; ` +
    `${s.rounds} round(s)${s.peerRounds !== undefined && s.peerRounds !== s.rounds ? ` (peers ${s.peerRounds})` : ''} × ${s.durationSec} s after ${s.warmupSec} s warm-up, ${s.connections} connections (${s.uploadConnections} for uploads); ${m.date}`
  )
}

export function renderText(results: BenchResults): string {
  const rows = results.workloads.flatMap(workloadRows).map((row) => row.cells)
  const out = [`Machine: ${machineLine(results)}`]
  if (rows.length > 0) out.push('', textTable(HEAD, rows))
  const notes = results.workloads.flatMap((w) => w.servers.flatMap((s) => (s.notes ?? []).map((note) => `  ${w.name} / ${s.name}: ${note}`)))
  if (notes.length > 0) out.push('', 'Notes:', ...notes)
  if (results.micro && 'dispatch' in results.micro) {
    const f = results.micro.fetchVsInject
    out.push('', textTable(MICRO_HEAD, microRows(results.micro)))
    out.push('', `app.inject ${whole(f.injectOnlyPerSec)} calls/s, app.fetch ${whole(f.fetchOnlyPerSec)} calls/s (${f.ratioUnread.toFixed(2)}×); reading the body: ${whole(f.injectPerSec)} vs ${whole(f.fetchPerSec)} calls/s (${f.ratio.toFixed(2)}×)${floorSentence(f, false)}`)
  } else if (results.micro) out.push('', `micro-benchmark failed: ${results.micro.error}`)
  if (results.curves) out.push('', 'Scaling curves (fastify-actions / fastify-bare):', '', ...curveTables(results.curves, textTable))
  out.push('', 'Targets (issues 29 and 45):', ...targets(results).map((line) => `  ${line}`))
  return out.join('\n')
}

export function renderMarkdown(results: BenchResults): string {
  const rows = results.workloads.flatMap(workloadRows).map((row) => row.cells)
  const out = [`Machine: ${machineLine(results)}.`]
  if (rows.length > 0) out.push('', markdownTable(HEAD, rows))
  const notes = results.workloads.flatMap((w) => w.servers.flatMap((s) => (s.notes ?? []).map((note) => `- ${w.name} / ${s.name}: ${note}`)))
  if (notes.length > 0) out.push('', 'Notes of the run:', '', ...notes)
  if (results.micro && 'dispatch' in results.micro) {
    const f = results.micro.fetchVsInject
    out.push('', markdownTable(MICRO_HEAD, microRows(results.micro)))
    out.push(
      '',
      `In one process: \`app.inject\` ${whole(f.injectOnlyPerSec)} calls/s, \`app.fetch\` ${whole(f.fetchOnlyPerSec)} calls/s (${f.ratioUnread.toFixed(2)}×); ` +
        `reading the body (\`.body\`, \`text()\`): ${whole(f.injectPerSec)} vs ${whole(f.fetchPerSec)} calls/s (${f.ratio.toFixed(2)}×)${floorSentence(f, true)}.`,
    )
  }
  out.push('', 'Targets of issues 29 and 45 (measured, not asserted):', '', ...targets(results).map((line) => `- ${line}`))
  if (results.curves) out.push('', '**Scaling curves of this run**', '', ...curveTables(results.curves, markdownTable))
  return out.join('\n')
}

// ---------------------------------------------------------------- scaling curves

type Table = (head: string[], rows: string[][], left?: number) => string
const pair = (a: string, b: string) => `${a} / ${b}`
const times = (value: number | null | undefined) => (value === null || value === undefined ? '-' : `${value.toFixed(2)}×`)
const bytes = (n: number) => (n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(2)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`)

function loadCurveTable(points: LoadCurvePoint[], first: string, xCell: ((p: LoadCurvePoint) => string) | undefined, table: Table, throughput: boolean): string {
  const head = [first, ...(xCell ? ['request'] : []), 'req/s (actions / bare)', 'req/s ratio']
  if (throughput) head.push('MiB/s (actions / bare)', 'MiB/s ratio')
  head.push('p99 ms (actions / bare)', 'p99 ratio', 'peak RSS MiB (actions / bare)', 'RSS ratio', 'CPU µs/req (actions / bare)')
  const withTypebox = points.some((p) => p.servers['fastify-bare-typebox'] !== undefined)
  if (withTypebox) head.push('peak RSS MiB bare + TypeBox', 'RSS ratio vs bare + TypeBox')
  const rows = points.map((p) => {
    const fa = p.servers['fastify-actions']
    const bare = p.servers['fastify-bare']
    const row = [p.label, ...(xCell ? [xCell(p)] : []), pair(whole(fa.reqPerSec), whole(bare.reqPerSec)), times(p.ratio.reqPerSec)]
    if (throughput) row.push(pair(fixed(fa.mibPerSec, 1), fixed(bare.mibPerSec, 1)), times(p.ratio.mibPerSec))
    row.push(pair(fixed(fa.p99Ms), fixed(bare.p99Ms)), times(p.ratio.p99Ms), pair(fixed(fa.rssMiB, 1), fixed(bare.rssMiB, 1)), times(p.ratio.rssMiB))
    row.push(pair(fixed(fa.cpuUsPerReq, 1), fixed(bare.cpuUsPerReq, 1)))
    if (withTypebox) row.push(fixed(p.servers['fastify-bare-typebox']?.rssMiB, 1), times(p.ratio.rssMiBVsTypebox))
    return row
  })
  return table(head, rows, xCell ? 2 : 1)
}

function bootTable(points: BootCurvePoint[], table: Table): string {
  const head = ['actions', 'boot ms (actions / bare)', 'boot ratio', 'process ms to ready (actions / bare)', 'RSS after ready MiB (actions / bare)', 'RSS ratio', 'heap used MiB (actions / bare)']
  const rows = points.map((p) => {
    const fa = p.servers['fastify-actions']
    const bare = p.servers['fastify-bare']
    return [
      whole(p.actions),
      pair(fixed(fa.bootMs, 0), fixed(bare.bootMs, 0)),
      times(p.ratio.bootMs),
      pair(fixed(fa.processMs, 0), fixed(bare.processMs, 0)),
      pair(fixed(fa.rssMiB, 1), fixed(bare.rssMiB, 1)),
      times(p.ratio.rssMiB),
      pair(fixed(fa.heapUsedMiB, 1), fixed(bare.heapUsedMiB, 1)),
    ]
  })
  return table(head, rows, 1)
}

function curveNotes(curves: CurveResults): string[] {
  const notes: string[] = []
  for (const [name, points] of [['payload', curves.payload], ['connections', curves.connections], ['uploads', curves.uploads]] as const) {
    for (const point of points ?? []) {
      for (const [server, sample] of Object.entries(point.servers)) {
        if (sample.skipped) notes.push(`${name} ${point.label} / ${server}: skipped: ${sample.skipped}`)
        for (const note of sample.notes ?? []) notes.push(`${name} ${point.label} / ${server}: ${note}`)
      }
    }
  }
  for (const point of curves.boot ?? []) {
    for (const [server, sample] of Object.entries(point.servers)) if (sample.error) notes.push(`boot ${point.actions} / ${server}: ${sample.error}`)
  }
  return notes
}

/** One table per curve that ran, each cell fastify-actions / fastify-bare, then the ratio; notes of skips and failures last. */
export function curveTables(curves: CurveResults, table: Table): string[] {
  const s = curves.settings
  const out = [`${s.rounds} round(s) × ${s.durationSec} s after ${s.warmupSec} s warm-up per point and server; ratios are fastify-actions / fastify-bare (req/s and MiB/s: higher is better; p99, RSS and boot: lower is better).`]
  if (curves.payload) out.push('', 'Payload size (echo of a JSON list, 32 connections):', '', loadCurveTable(curves.payload, 'payload', (p) => bytes(p.x), table, false))
  if (curves.connections) out.push('', 'Connections (execute-small):', '', loadCurveTable(curves.connections, 'connections', undefined, table, false))
  if (curves.uploads) out.push('', 'Concurrent uploads (10 MiB file each, one stream per connection):', '', loadCurveTable(curves.uploads, 'streams', undefined, table, true))
  if (curves.boot) out.push('', 'Boot with N actions (fastify-actions) or N POST routes with the same body schema (bare Fastify):', '', bootTable(curves.boot, table))
  const notes = curveNotes(curves)
  if (notes.length > 0) out.push('', 'Notes of the curves:', '', ...notes.map((n) => `- ${n}`))
  return out
}

// ---------------------------------------------------------------- the runtimes side by side

const cells = (values: string[]) => values.join(' / ')

/**
 * The results section of docs/benchmarks.md: every result file side by side (runs in the order given:
 * Node 26, the reference, then Node 24, then any other, for information), each cell "Node 26 / Node 24
 * / …"; the targets of issue 29 per runtime; then each run in full, folded.
 */
export function renderSideBySide(runs: Run[]): string {
  if (runs.length === 0) return 'No results yet: run `npm run bench:node26` and `npm run bench:node24` (or `npm run bench:reference`).'
  const labels = runs.map((r) => r.label)
  const both = `(${cells(labels)})`
  const out: string[] = []
  for (const run of runs) out.push(`- ${run.label} (\`${run.file}\`): ${machineLine(run.results)}.`)
  const names = [...new Set(runs.flatMap((r) => r.results.workloads.flatMap((w) => w.servers.map((s) => `${w.name}\u0000${s.name}`))))]
  const rows = names.flatMap((key) => {
    const [workload, server] = key.split('\u0000') as [string, string]
    const row = runs.map((r) => find(r.results, workload, server))
    if (!row.some(have)) return []
    const bare = runs.map((r) => find(r.results, workload, 'fastify-bare'))
    return [
      [
        workload,
        server,
        cells(row.map((s) => whole(s?.reqPerSec))),
        cells(row.map((s, i) => ratio(s?.reqPerSec ?? null, bare[i]?.reqPerSec ?? null))),
        cells(row.map((s) => fixed(s?.p99Ms))),
        cells(row.map((s) => fixed(s?.cpuUsPerReq, 1))),
        cells(row.map((s) => fixed(s?.rssIdleMiB, 1))),
        cells(row.map((s) => fixed(s?.rssMiB, 1))),
        cells(row.map((s, i) => ratio(s?.rssMiB ?? null, bare[i]?.rssMiB ?? null))),
      ],
    ]
  })
  out.push(
    '',
    markdownTable(
      ['workload', 'server', 'req/s ' + both, 'vs bare ' + both, 'p99 ms ' + both, 'CPU µs/req ' + both, 'RSS idle MiB ' + both, 'RSS load MiB ' + both, 'RSS vs bare ' + both],
      rows,
    ),
  )
  const micros = runs.map((r) => (r.results.micro && 'dispatch' in r.results.micro ? r.results.micro : undefined))
  if (micros.some((m) => m !== undefined)) {
    const sizes = [...new Set(micros.flatMap((m) => m?.dispatch ?? []).map((d) => d.actions))]
    const at = (m: MicroResult | undefined, n: number) => m?.dispatch.find((d) => d.actions === n)
    out.push(
      '',
      markdownTable(
        ['registered actions', 'boot ms ' + both, 'engine.executeAction µs ' + both, 'app.inject µs ' + both],
        sizes.map((n) => [
          whole(n),
          cells(micros.map((m) => fixed(at(m, n)?.bootMs, 0))),
          cells(micros.map((m) => fixed(at(m, n)?.executeActionUs))),
          cells(micros.map((m) => fixed(at(m, n)?.injectUs))),
        ]),
        1,
      ),
      '',
      `\`app.fetch\` + \`text()\` against \`app.inject\` + \`.body\`, calls/s ratio ${both}: ${cells(micros.map((m) => times(m?.fetchVsInject.ratio)))}; ` +
        `the floor of any standard \`Response\` over \`app.inject\` (the smallest one and its \`text()\`): ${cells(micros.map((m) => times(m?.fetchVsInject.floorRatio)))}.`,
    )
  }
  const curveRows: string[][] = []
  const curveOf = (r: Run, name: 'payload' | 'connections' | 'uploads') => r.results.curves?.[name] ?? []
  for (const name of ['payload', 'connections', 'uploads'] as const) {
    const points = [...new Set(runs.flatMap((r) => curveOf(r, name)).map((p) => p.label))]
    for (const label of points) {
      const at = runs.map((r) => curveOf(r, name).find((p) => p.label === label))
      curveRows.push([
        name,
        label,
        cells(at.map((p) => times(name === 'uploads' ? p?.ratio.mibPerSec : p?.ratio.reqPerSec))),
        cells(at.map((p) => times(p?.ratio.p99Ms))),
        cells(at.map((p) => times(p?.ratio.rssMiB))),
      ])
    }
  }
  const boots = runs.map((r) => r.results.curves?.boot ?? [])
  for (const actions of [...new Set(boots.flat().map((p) => p.actions))]) {
    const at = boots.map((b) => b.find((p) => p.actions === actions))
    curveRows.push(['boot', `${whole(actions)} actions`, cells(at.map((p) => times(p?.ratio.bootMs))), '-', cells(at.map((p) => times(p?.ratio.rssMiB)))])
  }
  if (curveRows.length > 0) {
    out.push(
      '',
      'Scaling curves, fastify-actions / fastify-bare at each point (uploads: MiB/s; boot: ms to ready):',
      '',
      markdownTable(['curve', 'point', 'throughput or boot ratio ' + both, 'p99 ratio ' + both, 'RSS ratio ' + both], curveRows),
    )
  }
  const lists = runs.map((r) => targetList(r.results))
  const targetNames = [...new Set(lists.flat().map((t) => t.name))]
  const cell = (t: Target | undefined) => (t ? `${verdict(t.ok).trim()}${t.cell ? ` ${t.cell}` : t.value === null ? '' : ` ${t.value.toFixed(2)}×`}` : '-')
  out.push(
    '',
    markdownTable(
      ['target of issue 29', ...labels],
      targetNames.map((name) => [name, ...lists.map((list) => cell(list.find((t) => t.name === name)))]),
      1,
    ),
  )
  out.push(
    '',
    `Ratios to fastify-bare are same-run ratios, the figures that count; absolute figures of two runtimes come from two runs made at different times, under whatever load the machine had then.`,
  )
  for (const run of runs) out.push('', '<details>', `<summary>${run.label} run in full (<code>${run.file}</code>)</summary>`, '', renderMarkdown(run.results), '', '</details>')
  return out.join('\n')
}
