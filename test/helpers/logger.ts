import type { LogEntry, ServiceLogger } from '../../lib/index.js'

export type RecordedEntry = LogEntry & { level: 'info' | 'warn' | 'error'; id: string }

/** A logger that records every entry and answers ids `log-1`, `log-2`, … */
export function recordingLogger(): { logger: ServiceLogger; entries: RecordedEntry[] } {
  const entries: RecordedEntry[] = []
  const write = (level: RecordedEntry['level']) => (entry: LogEntry) => {
    const id = `log-${entries.length + 1}`
    entries.push({ ...entry, level, id })
    return id
  }
  return { logger: { info: write('info'), warn: write('warn'), error: write('error') }, entries }
}
