/** The path of a request URL, without its query string. */
export function pathOf(url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}

/** `*` matches every path; `/x/*` and `/x` match `/x` and everything below it. */
export function compilePathMatcher(path: string): (requestPath: string) => boolean {
  if (path === '*' || path === '/*' || path === '' || path === '/') return () => true
  const prefix = path.endsWith('/*') ? path.slice(0, -2) : path.replace(/\/+$/, '')
  return (requestPath) => requestPath === prefix || (requestPath.startsWith(prefix) && requestPath.charCodeAt(prefix.length) === 47)
}
