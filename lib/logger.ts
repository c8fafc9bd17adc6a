/** One entry written through a `ServiceLogger`. */
export interface LogEntry {
  atFunction: string
  message: string
  data?: unknown
}

/** A logger the framework writes through; each call returns the log id. */
export interface ServiceLogger {
  info: (entry: LogEntry) => string
  warn: (entry: LogEntry) => string
  error: (entry: LogEntry) => string
}
