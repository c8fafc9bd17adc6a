import { resolveCoreConfig, type CoreConfig, type ResolvedCoreConfig } from '../config.js'
import { resolveAuth, resolveRest, type AuthConfig, type ResolvedAuth, type ResolvedRest, type RestConfig } from '../../plugins/config.js'

/** What `createServer` and the `fastifyActions` plugin take. */
export interface ServerConfig<TDB = unknown> extends CoreConfig<TDB> {
  /** JWT for protected actions. */
  auth?: AuthConfig
  /** The REST interface; `createServer` builds it only when given. The plugin always serves it (`{ baseUrl: '', allowedOrigins: [] }` when absent). */
  rest?: RestConfig
}

/** The configuration as every part receives it: checked once at boot, every default applied, frozen. */
export interface ResolvedConfig extends ResolvedCoreConfig {
  readonly auth?: ResolvedAuth
  readonly rest?: ResolvedRest
}

/** Checks the whole configuration and applies every default; throws a coded `FA_ERR_CONFIG` (or `FA_ERR_EMPTY_SERVICES`) naming the field. */
export function resolveConfig(config: ServerConfig<any>, restWhenAbsent?: RestConfig): ResolvedConfig {
  const core = resolveCoreConfig(config)
  const rest = config?.rest ?? restWhenAbsent
  return Object.freeze({
    ...core,
    auth: config.auth === undefined ? undefined : resolveAuth(config.auth),
    rest: rest === undefined ? undefined : resolveRest(rest, core.serverName),
  })
}
