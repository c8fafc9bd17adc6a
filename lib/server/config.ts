import { CORE_KEYS, resolveCoreConfig, type CoreConfig, type ResolvedCoreConfig } from '../config.js'
import { checkKnownKeys, type KeyRules, type KeyTable } from '../config-keys.js'
import { AUTH_KEYS, resolveAuth, type AuthConfig, type ResolvedAuth } from '../../plugins/auth-config.js'
import { REST_KEYS, resolveRest, type ResolvedRest, type RestConfig } from '../../plugins/config.js'

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

/** Every key of `ServerConfig`, composed from each part's own table: the unknown-key check (lib/config-keys.ts). */
export const CONFIG_KEYS: KeyTable<ServerConfig> = Object.freeze({ ...CORE_KEYS, auth: AUTH_KEYS, rest: REST_KEYS })

/**
 * Checks the whole configuration and applies every default; throws a coded `FA_ERR_CONFIG` (or
 * `FA_ERR_EMPTY_SERVICES`) naming the field. A key no option has is refused with the nearest known
 * one; `keys` are the keys allowed (the plugin adds its registration options).
 */
export function resolveConfig(config: ServerConfig<any>, restWhenAbsent?: RestConfig, keys: KeyRules = CONFIG_KEYS): ResolvedConfig {
  checkKnownKeys(config, keys)
  const core = resolveCoreConfig(config)
  const rest = config?.rest ?? restWhenAbsent
  return Object.freeze({
    ...core,
    auth: config.auth === undefined ? undefined : resolveAuth(config.auth),
    rest: rest === undefined ? undefined : resolveRest(rest, core.serverName),
  })
}
