/**
 * A hand-written SVG chart: one bar panel per workload (their scales differ), one bar per server; then,
 * when the run has them, the scaling curves as small line charts of fastify-actions / fastify-bare ratios.
 */
import type { BenchResults, CurveResults } from './results.js'
import { SERVERS, type ServerName } from './shared.js'

const COLORS: Record<ServerName, string> = {
  'fastify-actions': '#1f6feb',
  'fastify-bare': '#6e7781',
  'hono-zod': '#e36209',
  moleculer: '#8250df',
  'node-http': '#2da44e',
}

const WIDTH = 760
const LABEL = 130
const VALUE = 200
const BAR = 18
const GAP = 6
const PANEL_HEAD = 28
const PANEL_GAP = 14

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const format = (value: number) => Math.round(value).toLocaleString('en-US')

const METRIC_COLORS = { throughput: '#1f6feb', p99: '#e36209', rss: '#8250df' }

interface Series {
  name: string
  color: string
  values: Array<number | null>
}

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
    if (points.length > 1) parts.push(`<polyline points="${points.join(' ')}" fill="none" stroke="${s.color}" stroke-width="2"/>`)
    s.values.forEach((v, i) => {
      if (v === null) return
      parts.push(`<circle cx="${xOf(i).toFixed(1)}" cy="${yOf(v).toFixed(1)}" r="3" fill="${s.color}"><title>${escape(`${s.name} at ${labels[i]}: ${v.toFixed(2)}×`)}</title></circle>`)
      if (v > max) parts.push(`<text x="${(xOf(i) + 5).toFixed(1)}" y="${(yOf(v) + 10).toFixed(1)}" class="axis">${v.toFixed(1)}×</text>`)
    })
  }
  return parts
}

/** The curves: a legend, then up to four panels, two per row; returns the parts and the height used. */
function curvePanels(curves: CurveResults, y: number): { parts: string[]; height: number } {
  const panels: Array<{ title: string; labels: string[]; series: Series[] }> = []
  const load = (title: string, points: NonNullable<CurveResults['payload']>, throughput: 'reqPerSec' | 'mibPerSec', label: (p: (typeof points)[number]) => string) =>
    panels.push({
      title,
      labels: points.map(label),
      series: [
        { name: throughput === 'mibPerSec' ? 'MiB/s' : 'req/s', color: METRIC_COLORS.throughput, values: points.map((p) => p.ratio[throughput] ?? null) },
        { name: 'p99', color: METRIC_COLORS.p99, values: points.map((p) => p.ratio.p99Ms) },
        { name: 'peak RSS', color: METRIC_COLORS.rss, values: points.map((p) => p.ratio.rssMiB) },
      ],
    })
  if (curves.payload) load('Payload size of an echo (req/s, p99, RSS)', curves.payload, 'reqPerSec', (p) => p.label)
  if (curves.connections) load('Connections, execute-small (req/s, p99, RSS)', curves.connections, 'reqPerSec', (p) => format(p.x))
  if (curves.uploads) load('Concurrent 10 MiB uploads (MiB/s, p99, RSS)', curves.uploads, 'mibPerSec', (p) => `${p.x} stream${p.x === 1 ? '' : 's'}`)
  if (curves.boot) {
    panels.push({
      title: 'Boot with N actions / routes (boot ms, RSS)',
      labels: curves.boot.map((p) => `${format(p.actions)}`),
      series: [
        { name: 'boot ms', color: METRIC_COLORS.throughput, values: curves.boot.map((p) => p.ratio.bootMs) },
        { name: 'RSS after ready', color: METRIC_COLORS.rss, values: curves.boot.map((p) => p.ratio.rssMiB) },
      ],
    })
  }
  if (panels.length === 0) return { parts: [], height: 0 }
  const parts = [
    `<text x="12" y="${y + 18}" class="head">Scaling curves: fastify-actions / fastify-bare, same work (1.00× = equal)</text>`,
    `<text x="12" y="${y + 36}" class="caption">req/s and MiB/s: above 1 is better; p99, RSS and boot ms: below 1 is better. Points above 4× are drawn at 4× with their value.</text>`,
  ]
  const legend: Array<[string, string]> = [
    ['throughput (req/s, MiB/s) / boot ms', METRIC_COLORS.throughput],
    ['p99 latency', METRIC_COLORS.p99],
    ['peak RSS', METRIC_COLORS.rss],
  ]
  legend.forEach(([name, color], i) => {
    const lx = 12 + i * 240
    parts.push(`<rect x="${lx}" y="${y + 46}" width="12" height="4" fill="${color}"/><text x="${lx + 18}" y="${y + 52}" class="label">${escape(name)}</text>`)
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

export function renderSvg(results: BenchResults): string {
  const parts: string[] = []
  let y = 46
  for (const workload of results.workloads) {
    const rows = SERVERS.map((name) => workload.servers.find((server) => server.name === name)).filter((row) => row !== undefined)
    const max = Math.max(1, ...rows.map((row) => row.reqPerSec ?? 0))
    const bare = rows.find((row) => row.name === 'fastify-bare')?.reqPerSec ?? null
    parts.push(`<text x="12" y="${y + 18}" class="title">${escape(workload.name)}</text>`)
    let rowY = y + PANEL_HEAD
    for (const row of rows) {
      const barMax = WIDTH - LABEL - VALUE - 24
      parts.push(`<text x="${LABEL}" y="${rowY + 13}" class="label" text-anchor="end">${escape(row.name)}</text>`)
      if (row.reqPerSec === null) {
        parts.push(`<text x="${LABEL + 8}" y="${rowY + 13}" class="skip">${escape(row.skipped ?? 'skipped')}</text>`)
      } else {
        const width = Math.max(1, (row.reqPerSec / max) * barMax)
        parts.push(`<rect x="${LABEL + 8}" y="${rowY}" width="${width.toFixed(1)}" height="${BAR}" rx="2" fill="${COLORS[row.name]}"/>`)
        const ratio = bare && row.name !== 'fastify-bare' ? ` (${(row.reqPerSec / bare).toFixed(2)}× bare)` : ''
        parts.push(`<text x="${(LABEL + 14 + width).toFixed(1)}" y="${rowY + 13}" class="value">${format(row.reqPerSec)} req/s${ratio}</text>`)
      }
      rowY += BAR + GAP
    }
    y = rowY + PANEL_GAP
  }
  if (results.curves) {
    const curves = curvePanels(results.curves, y)
    parts.push(...curves.parts)
    y += curves.height
  }
  const { machine, settings } = results
  const caption = `${machine.cpus} cores (${machine.cpuModel}), Node ${machine.node}, load avg ${machine.loadAverageStart.map((v) => v.toFixed(2)).join(' ')}; median of ${settings.rounds} round(s) × ${settings.durationSec} s; ${machine.date.slice(0, 10)}`
  const height = y + 20
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif">`,
    '<style>.title{font-size:14px;font-weight:600;fill:#24292f}.label{font-size:12px;fill:#24292f}.value{font-size:12px;fill:#57606a}.skip{font-size:12px;fill:#8c959f;font-style:italic}.head{font-size:16px;font-weight:700;fill:#24292f}.caption{font-size:11px;fill:#57606a}.axis{font-size:10px;fill:#57606a}</style>',
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    '<text x="12" y="24" class="head">fastify-actions and peers: requests per second (higher is better)</text>',
    `<text x="12" y="40" class="caption">${escape(caption)}</text>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n')
}
