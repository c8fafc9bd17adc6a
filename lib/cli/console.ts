/**
 * Sends every console line to stderr: a project's start-up lines (the service table, URLs, its own
 * logs) must not mix with what a command prints on stdout (a table, a document, the MCP protocol).
 */
export function consoleToStderr(): void {
  const write = (...args: unknown[]) => console.error(...args)
  console.log = write
  console.info = write
  console.warn = write
  console.debug = write
  console.table = (data: unknown) => console.error(data)
}
