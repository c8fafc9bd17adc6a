/** A hand-written SVG bar chart: one panel per workload (their scales differ), one bar per server. */
import type { BenchResults } from './results.js'
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
  const { machine, settings } = results
  const caption = `${machine.cpus} cores (${machine.cpuModel}), Node ${machine.node}, load avg ${machine.loadAverageStart.map((v) => v.toFixed(2)).join(' ')}; median of ${settings.rounds} round(s) × ${settings.durationSec} s; ${machine.date.slice(0, 10)}`
  const height = y + 20
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif">`,
    '<style>.title{font-size:14px;font-weight:600;fill:#24292f}.label{font-size:12px;fill:#24292f}.value{font-size:12px;fill:#57606a}.skip{font-size:12px;fill:#8c959f;font-style:italic}.head{font-size:16px;font-weight:700;fill:#24292f}.caption{font-size:11px;fill:#57606a}</style>',
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    '<text x="12" y="24" class="head">fastify-actions and peers: requests per second (higher is better)</text>',
    `<text x="12" y="40" class="caption">${escape(caption)}</text>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n')
}
