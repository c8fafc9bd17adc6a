/**
 * A hand-written SVG chart of one or more runs (Node 26 and Node 24 side by side): one bar panel per
 * workload (their scales differ), one bar per server and runtime (the first run solid, the next ones
 * lighter); then the scaling curves as small line charts of fastify-actions / fastify-bare ratios, one
 * line per metric and runtime (the first run solid, the next ones dashed).
 */
import type { CurveResults, Run } from './results.js'
import { SERVERS, type ServerName } from './shared.js'

const COLORS: Record<ServerName, string> = {
  'fastify-actions': '#1f6feb',
  'fastify-bare': '#6e7781',
  'hono-zod': '#e36209',
  moleculer: '#8250df',
  'node-http': '#2da44e',
  'fastify-bare-typebox': '#8c959f',
  'mcp-sdk': '#bf3989',
}

const WIDTH = 760
const LABEL = 130
const VALUE = 236
const BAR = 14
const GAP = 6
const PANEL_HEAD = 28
const PANEL_GAP = 14

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const format = (value: number) => Math.round(value).toLocaleString('en-US')

const METRIC_COLORS = { throughput: '#1f6feb', p99: '#e36209', rss: '#8250df' }

interface Series {
  name: string
  color: string
  /** A stroke-dasharray for the runs after the first. */
  dash?: string
  values: Array<number | null>
}

/** Bar opacity and line dash of the n-th run. */
const OPACITY = [1, 0.5, 0.25]
const DASH = [undefined, '5 3', '1 3']

/** One line chart of ratios at `x`, `y` (top left): categories along x, a dashed line at 1.00×. */
function ratioPanel(x: number, y: number, width: number, height: number, title: string, labels: string[], series: Series[]): string[] {
  const parts: string[] = []
  const left = x + 44
  const right = x + width - 12
  const top = y + 28
  const bottom = y + height - 34
  const all = series.flatMap((s) => s.values.filter((v): v is number => v !== null))
  const max = Math.min(4, Math.max(1.5, Math.ceil(Math.max(0, ...all) * 2) / 2))
  const yOf = (v: number) => bottom - (Math.min(v, max) / max) * (bottom - top)
  const xOf = (i: number) => (labels.length === 1 ? (left + right) / 2 : left + 16 + (i * (right - left - 32)) / (labels.length - 1))
  parts.push(`<text x="${x + 4}" y="${y + 16}" class="title">${escape(title)}</text>`)
  for (let tick = 0; tick <= max + 1e-9; tick += max > 2 ? 1 : 0.5) {
    const ty = yOf(tick).toFixed(1)
    parts.push(`<line x1="${left}" y1="${ty}" x2="${right}" y2="${ty}" stroke="${tick === 1 ? '#57606a' : '#d0d7de'}"${tick === 1 ? ' stroke-dasharray="4 3"' : ''}/>`)
    parts.push(`<text x="${left - 6}" y="${(Number(ty) + 4).toFixed(1)}" class="axis" text-anchor="end">${tick.toFixed(1)}×</text>`)
  }
  labels.forEach((label, i) => parts.push(`<text x="${xOf(i).toFixed(1)}" y="${bottom + 16}" class="axis" text-anchor="middle">${escape(label)}</text>`))
  for (const s of series) {
    const points = s.values.flatMap((v, i) => (v === null ? [] : [`${xOf(i).toFixed(1)},${yOf(v).toFixed(1)}`]))
    if (points.length > 1) parts.push(`<polyline points="${points.join(' ')}" fill="none" stroke="${s.color}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/>`)
    s.values.forEach((v, i) => {
      if (v === null) return
      parts.push(`<circle cx="${xOf(i).toFixed(1)}" cy="${yOf(v).toFixed(1)}" r="3" fill="${s.color}"><title>${escape(`${s.name} at ${labels[i]}: ${v.toFixed(2)}×`)}</title></circle>`)
      if (v > max) parts.push(`<text x="${(xOf(i) + 5).toFixed(1)}" y="${(yOf(v) + 10).toFixed(1)}" class="axis">${v.toFixed(1)}×</text>`)
    })
  }
  return parts
}

/** The curves of every run: a legend, then up to four panels, two per row; returns the parts and the height used. */
function curvePanels(runs: Run[], y: number): { parts: string[]; height: number } {
  const panels: Array<{ title: string; labels: string[]; series: Series[] }> = []
  type LoadCurve = 'payload' | 'connections' | 'uploads'
  const of = (run: Run) => run.results.curves ?? ({} as Partial<CurveResults>)
  const present = (name: keyof CurveResults) => runs.some((r) => of(r)[name] !== undefined)
  const suffix = (i: number) => (runs.length > 1 ? `, ${runs[i].label}` : '')
  const load = (title: string, name: LoadCurve, throughput: 'reqPerSec' | 'mibPerSec', label: (x: number, text: string) => string) => {
    const base = runs.map((r) => of(r)[name]).find((points) => points !== undefined) ?? []
    panels.push({
      title,
      labels: base.map((p) => label(p.x, p.label)),
      series: runs.flatMap((run, i) => {
        const points = base.map((b) => of(run)[name]?.find((p) => p.label === b.label))
        return [
          { name: `${throughput === 'mibPerSec' ? 'MiB/s' : 'req/s'}${suffix(i)}`, color: METRIC_COLORS.throughput, dash: DASH[i], values: points.map((p) => p?.ratio[throughput] ?? null) },
          { name: `p99${suffix(i)}`, color: METRIC_COLORS.p99, dash: DASH[i], values: points.map((p) => p?.ratio.p99Ms ?? null) },
          { name: `peak RSS${suffix(i)}`, color: METRIC_COLORS.rss, dash: DASH[i], values: points.map((p) => p?.ratio.rssMiB ?? null) },
        ]
      }),
    })
  }
  if (present('payload')) load('Payload size of an echo (req/s, p99, RSS)', 'payload', 'reqPerSec', (_, text) => text)
  if (present('connections')) load('Connections, execute-small (req/s, p99, RSS)', 'connections', 'reqPerSec', (x) => format(x))
  if (present('uploads')) load('Concurrent 10 MiB uploads (MiB/s, p99, RSS)', 'uploads', 'mibPerSec', (x) => `${x} stream${x === 1 ? '' : 's'}`)
  if (present('boot')) {
    const base = runs.map((r) => of(r).boot).find((points) => points !== undefined) ?? []
    panels.push({
      title: 'Boot with N actions / routes (boot ms, RSS)',
      labels: base.map((p) => `${format(p.actions)}`),
      series: runs.flatMap((run, i) => {
        const points = base.map((b) => of(run).boot?.find((p) => p.actions === b.actions))
        return [
          { name: `boot ms${suffix(i)}`, color: METRIC_COLORS.throughput, dash: DASH[i], values: points.map((p) => p?.ratio.bootMs ?? null) },
          { name: `RSS after ready${suffix(i)}`, color: METRIC_COLORS.rss, dash: DASH[i], values: points.map((p) => p?.ratio.rssMiB ?? null) },
        ]
      }),
    })
  }
  if (panels.length === 0) return { parts: [], height: 0 }
  const parts = [
    `<text x="12" y="${y + 18}" class="head">Scaling curves: fastify-actions / fastify-bare, same work (1.00× = equal)</text>`,
    `<text x="12" y="${y + 36}" class="caption">req/s and MiB/s: above 1 is better; p99, RSS and boot ms: below 1 is better. Points above 4× are drawn at 4× with their value.</text>`,
  ]
  const legend: Array<[string, string, string | undefined]> = [
    ['throughput / boot ms', METRIC_COLORS.throughput, undefined],
    ['p99 latency', METRIC_COLORS.p99, undefined],
    ['peak RSS', METRIC_COLORS.rss, undefined],
    ...(runs.length > 1 ? runs.map((run, i): [string, string, string | undefined] => [run.label, '#57606a', DASH[i]]) : []),
  ]
  legend.forEach(([name, color, dash], i) => {
    const lx = 12 + i * (runs.length > 1 ? 148 : 240)
    parts.push(
      `<line x1="${lx}" y1="${y + 50}" x2="${lx + 14}" y2="${y + 50}" stroke="${color}" stroke-width="3"${dash ? ` stroke-dasharray="${dash === '5 3' ? '4 2' : dash}"` : ''}/><text x="${lx + 18}" y="${y + 54}" class="label">${escape(name)}</text>`,
    )
  })
  const panelWidth = (WIDTH - 24) / 2
  const panelHeight = 190
  const top = y + 62
  panels.forEach((panel, i) => {
    const px = 12 + (i % 2) * panelWidth
    const py = top + Math.floor(i / 2) * (panelHeight + 8)
    parts.push(...ratioPanel(px, py, panelWidth, panelHeight, panel.title, panel.labels, panel.series))
  })
  return { parts, height: 62 + Math.ceil(panels.length / 2) * (panelHeight + 8) }
}

/** The chart of `runs` (the first is the reference, drawn solid); the workloads of every run, in the order of the first. */
export function renderSvg(runs: Run[]): string {
  const parts: string[] = []
  let y = 46 + 14 * Math.max(0, runs.length - 1)
  const workloads = [...new Set(runs.flatMap((r) => r.results.workloads.map((w) => w.name)))]
  const multi = runs.length > 1
  for (const name of workloads) {
    const perRun = runs.map((r) => r.results.workloads.find((w) => w.name === name))
    const rowsOf = (i: number) => SERVERS.flatMap((server) => perRun[i]?.servers.find((row) => row.name === server) ?? [])
    const max = Math.max(1, ...runs.flatMap((_, i) => rowsOf(i).map((row) => row.reqPerSec ?? 0)))
    parts.push(`<text x="12" y="${y + 18}" class="title">${escape(name)}</text>`)
    let rowY = y + PANEL_HEAD
    for (const server of SERVERS) {
      const rows = runs.map((_, i) => rowsOf(i).find((row) => row.name === server))
      if (rows.every((row) => row === undefined)) continue
      parts.push(`<text x="${LABEL}" y="${rowY + 11}" class="label" text-anchor="end">${escape(server)}</text>`)
      const reasons = new Set(rows.map((row) => (row && row.reqPerSec === null ? (row.skipped ?? 'skipped') : undefined)))
      if (reasons.size === 1 && !reasons.has(undefined)) {
        // Skipped alike on every runtime (a workload the server does not serve): one line.
        parts.push(`<text x="${LABEL + 8}" y="${rowY + 11}" class="skip">${escape([...reasons][0]!)}</text>`)
        rowY += BAR + GAP
        continue
      }
      rows.forEach((row, i) => {
        const barMax = WIDTH - LABEL - VALUE - 24
        const tag = multi ? `${runs[i].label}: ` : ''
        if (!row || row.reqPerSec === null) {
          parts.push(`<text x="${LABEL + 8}" y="${rowY + 11}" class="skip">${escape(tag + (row?.skipped ?? 'not run'))}</text>`)
        } else {
          const bare = rowsOf(i).find((r) => r.name === 'fastify-bare')?.reqPerSec ?? null
          const width = Math.max(1, (row.reqPerSec / max) * barMax)
          parts.push(`<rect x="${LABEL + 8}" y="${rowY}" width="${width.toFixed(1)}" height="${BAR}" rx="2" fill="${COLORS[server]}" fill-opacity="${OPACITY[i] ?? 0.25}"/>`)
          const ratio = bare && server !== 'fastify-bare' ? ` (${(row.reqPerSec / bare).toFixed(2)}× bare)` : ''
          parts.push(`<text x="${(LABEL + 14 + width).toFixed(1)}" y="${rowY + 11}" class="value">${escape(`${tag}${format(row.reqPerSec)} req/s${ratio}`)}</text>`)
        }
        rowY += BAR + 2
      })
      rowY += GAP - 2
    }
    y = rowY + PANEL_GAP
  }
  const curves = curvePanels(runs, y)
  parts.push(...curves.parts)
  y += curves.height
  const captions = runs.map(
    ({ label, results: { machine, settings } }) =>
      `${multi ? `${label}: ` : ''}${machine.cpus} cores (${machine.cpuModel}), Node ${machine.node}, load avg ${machine.loadAverageStart.map((v) => v.toFixed(2)).join(' ')}; median of ${settings.rounds} round(s) × ${settings.durationSec} s; ${machine.date.slice(0, 10)}`,
  )
  const head = `Requests per second, higher is better${multi ? `: ${runs.map((r, i) => `${r.label} ${i === 0 ? 'solid' : 'lighter'}`).join(', ')}` : ''}`
  const height = y + 20
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif">`,
    '<style>.title{font-size:14px;font-weight:600;fill:#24292f}.label{font-size:12px;fill:#24292f}.value{font-size:11px;fill:#57606a}.skip{font-size:11px;fill:#8c959f;font-style:italic}.head{font-size:16px;font-weight:700;fill:#24292f}.caption{font-size:11px;fill:#57606a}.axis{font-size:10px;fill:#57606a}</style>',
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="12" y="24" class="head">${escape(head)}</text>`,
    ...captions.map((caption, i) => `<text x="12" y="${40 + 14 * i}" class="caption">${escape(caption)}</text>`),
    ...parts,
    '</svg>',
    '',
  ].join('\n')
}
