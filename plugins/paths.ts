import type { FastifyInstance } from 'fastify'

/** The router options that change which path a request target routes to (Fastify's `routerOptions`). */
export interface RouterPathOptions {
  caseSensitive: boolean
  ignoreDuplicateSlashes: boolean
  useSemicolonDelimiter: boolean
}

/** `app`'s router options, from `routerOptions` or (deprecated) the top level of Fastify's options. */
export function routerPathOptionsOf(app: FastifyInstance): RouterPathOptions {
  const config = app.initialConfig as Record<string, unknown> & { routerOptions?: Record<string, unknown> }
  const option = (name: keyof RouterPathOptions) => config.routerOptions?.[name] ?? config[name]
  return {
    caseSensitive: option('caseSensitive') !== false,
    ignoreDuplicateSlashes: option('ignoreDuplicateSlashes') === true,
    useSemicolonDelimiter: option('useSemicolonDelimiter') === true,
  }
}

const defaultOptions: RouterPathOptions = { caseSensitive: true, ignoreDuplicateSlashes: false, useSemicolonDelimiter: false }

/** The path of an absolute-form target (`http://host/path?q`), as find-my-way takes it; undefined when it is no such target. */
function absolutePath(url: string): string | undefined {
  const schemeEnd = url.indexOf('://')
  if (schemeEnd === -1) return undefined
  const scheme = url.slice(0, schemeEnd).toLowerCase()
  if (scheme !== 'http' && scheme !== 'https') return undefined
  const start = schemeEnd + 3
  const slash = url.indexOf('/', start)
  const query = url.indexOf('?', start)
  if (slash === -1 && query === -1) return '/'
  if (slash === -1 || (query !== -1 && query < slash)) return '/' + url.slice(query)
  return url.slice(slash)
}

/**
 * The path the router routes a request target on, as find-my-way computes it: the path of an
 * absolute-form target, cut at `?` and `#` (and `;` with `useSemicolonDelimiter`), `%XX` decoded as
 * `decodeURI` does (reserved characters and `%25` stay encoded), duplicate slashes merged when the
 * router ignores them. `request.url` is the raw target: never decide by it (docs/security.md).
 * A target the router cannot decode is answered 400 by Fastify before any route: its raw path is returned.
 */
export function routedPath(url: string, options: RouterPathOptions = defaultOptions): string {
  let path = url
  if (path.charCodeAt(0) !== 47) path = absolutePath(path) ?? path
  let end = path.length
  for (let i = 1; i < end; i++) {
    const code = path.charCodeAt(i)
    if (code === 63 || code === 35 || (code === 59 && options.useSemicolonDelimiter)) end = i
  }
  if (end !== path.length) path = path.slice(0, end)
  if (path.includes('%')) {
    try {
      path = decodeURI(path.replaceAll('%25', '%2525'))
    } catch {
      // A malformed escape: the router refuses the target with a 400 before any route.
    }
  }
  if (options.ignoreDuplicateSlashes && path.includes('//')) path = path.replace(/\/{2,}/g, '/')
  return path
}

/** A matcher of request paths, compiled once from a rule's path. */
export type PathMatcher = (requestPath: string) => boolean

/**
 * `*` matches every path; `/x/*` and `/x` match `/x` and everything below it. The request path given
 * must be `routedPath`'s; with a case-insensitive router both sides are compared in lower case.
 */
export function compilePathMatcher(path: string, options: RouterPathOptions = defaultOptions): PathMatcher {
  if (path === '*' || path === '/*' || path === '' || path === '/') return () => true
  let prefix = path.endsWith('/*') ? path.slice(0, -2) : path.replace(/\/+$/, '')
  if (!options.caseSensitive) prefix = prefix.toLowerCase()
  const below = (requestPath: string) => requestPath === prefix || (requestPath.startsWith(prefix) && requestPath.charCodeAt(prefix.length) === 47)
  return options.caseSensitive ? below : (requestPath) => below(requestPath.toLowerCase())
}
