import { realpathSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { join, resolve, sep } from 'node:path'
import type { FastifyError, FastifyInstance, FastifyPluginCallback } from 'fastify'
import type { FastifyStaticOptions } from '@fastify/static'
import { errorMessage, type Diagnostics } from '../lib/diagnostics.js'
import { ErrStaticDir } from '../lib/errors.js'
import { messages } from '../lib/messages.js'
import { concern } from './concern.js'

export const STATIC_PREFIX = '/assets/'

export type StaticRuntime = 'bun' | 'node'

/** Loads the static adapter: an ES module whose default export is a Fastify plugin. */
export type StaticAdapterLoader = () => Promise<{ default: FastifyPluginCallback<FastifyStaticOptions> | unknown }>

/** The adapter of each runtime. On this Node implementation both are @fastify/static. */
const adapters: Record<StaticRuntime, StaticAdapterLoader> = {
  bun: () => import('@fastify/static'),
  node: () => import('@fastify/static'),
}

export interface StaticPluginOptions {
  /** `rest.staticDir`, resolved against `process.cwd()`. */
  dir: string
  runtime: StaticRuntime
  diagnostics: Diagnostics
  /** `rest.staticFollowSymlinks`: serve symbolic links that point outside `dir` (default: they answer 404). */
  followSymlinks?: boolean
  /** Replaces the runtime's loader (tests use it to make the import fail). */
  load?: StaticAdapterLoader
}

/**
 * `GET /assets/*` from `staticDir`. @fastify/static cannot be registered after `ready`, so the
 * adapter is imported here, during `createServer`; when the import fails, static serving stays off
 * and `/assets/*` answers the 404 envelope. `addMiddleware` functions do not run for these routes.
 */
async function serveStatic(app: FastifyInstance, options: StaticPluginOptions): Promise<void> {
  const { dir, runtime, diagnostics } = options
  const root = resolve(process.cwd(), dir)
  try {
    await mkdir(root, { recursive: true })
  } catch (error) {
    throw new ErrStaticDir(root, errorMessage(error))
  }

  let adapter: FastifyPluginCallback<FastifyStaticOptions>
  try {
    const load = options.load ?? adapters[runtime]
    const loaded = (await load()).default
    if (typeof loaded !== 'function') throw new TypeError(messages.staticNoPlugin)
    adapter = loaded as FastifyPluginCallback<FastifyStaticOptions>
  } catch (error) {
    diagnostics.warn('rest.static', messages.staticUnavailable(runtime, errorMessage(error)))
    return
  }

  // A refused path (traversal, `//`, `%2f`, a null byte…) answers the 404 envelope like a missing file.
  const envelope = app.errorHandler
  app.setErrorHandler(function staticErrors(error: FastifyError, request, reply) {
    if (error.code === 'FST_STATIC_FORBIDDEN_PATH') return reply.callNotFound()
    return envelope.call(this, error, request, reply)
  })

  // Static comes before `addMiddleware` (the specification's order). Root hooks added later still
  // reach this context, so the file is answered here, in this context's own `onRequest` step,
  // after CORS and rate limiting and before the middleware hook; `done` is never called, as the
  // answer ends the request.
  app.addHook('onRequest', function serveAsset(request, reply, _done) {
    Promise.resolve(request.routeOptions.handler.call(this, request, reply)).catch((error: Error) => reply.send(error))
  })

  await app.register(adapter, {
    root,
    prefix: STATIC_PREFIX,
    decorateReply: false,
    // Dotfiles (`.env`, `.git/…`) are never public assets: they answer 404.
    dotfiles: 'ignore',
    ...(options.followSymlinks ? {} : { allowedPath: insideRoot(root) }),
  })
}

/**
 * @fastify/static (through `send`) follows symbolic links wherever they point. This check resolves
 * the requested path and refuses (404) one whose real location is outside the root's.
 */
function insideRoot(root: string): (pathname: string) => boolean {
  const realRoot = realpathSync.native(root)
  const prefix = realRoot.endsWith(sep) ? realRoot : realRoot + sep
  return (pathname) => {
    let real: string
    try {
      real = realpathSync.native(join(root, pathname))
    } catch {
      // Missing: @fastify/static answers the 404 itself.
      return true
    }
    return real === realRoot || real.startsWith(prefix)
  }
}

/** Static files at `/assets/*` as the plugin `fastify-actions-static`. */
export const staticPlugin = concern('static', serveStatic, { encapsulate: true })
