import { createHash, randomUUID } from 'node:crypto'

/**
 * Idempotency keys (docs/idempotency.md; the IETF draft-ietf-httpapi-idempotency-key-header and
 * Stripe's behaviour): what a key may be, the fingerprint of a request, and the stores that hold a
 * key while its first request runs and its answer afterwards. No HTTP here: the adapters decide
 * statuses (plugins/idempotency.ts).
 */

/** 1 to 255 visible ASCII characters (0x21 to 0x7E). */
const KEY_RULE = /^[\x21-\x7e]{1,255}$/

export function isIdempotencyKey(value: unknown): value is string {
  return typeof value === 'string' && KEY_RULE.test(value)
}

/** JSON with every object's keys sorted: `{ b: 1, a: 2 }` and `{ a: 2, b: 1 }` are one input. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`
  const keys = Object.keys(value).sort()
  const parts: string[] = []
  for (const key of keys) {
    const item = (value as Record<string, unknown>)[key]
    if (item !== undefined) parts.push(`${JSON.stringify(key)}:${canonicalJson(item)}`)
  }
  return `{${parts.join(',')}}`
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url')

/** What a repeat must match: the action and its canonical input. */
export function fingerprintOf(action: string, input: unknown): string {
  return sha256(`${action}\u0000${canonicalJson(input)}`)
}

/** Where a key lives in the store: per principal, so two principals' keys never meet. */
export function storeKeyOf(principal: string, key: string): string {
  return sha256(`${principal}\u0000${key}`)
}

/** The answer a key replays: the status and the body exactly as first sent. */
export interface StoredAnswer {
  readonly status: number
  /** The JSON body as sent. */
  readonly body: string
}

/** What a store says when a request asks for a key. */
export type IdempotencyClaim =
  /** The key was free: this request runs; `token` proves it holds the key (for `complete` and `release`). */
  | { readonly state: 'acquired'; readonly token: string }
  /** Another request with this key is running. */
  | { readonly state: 'running'; readonly fingerprint: string }
  /** A request with this key has finished: its answer. */
  | { readonly state: 'done'; readonly fingerprint: string; readonly answer: StoredAnswer }

/**
 * Where keys live. Every method may return a promise; a store that throws (or does not answer
 * within `rest.idempotency.timeout`) refuses the request with a 503, never a second run.
 */
export interface IdempotencyStore {
  /**
   * Takes `key` for a request with `fingerprint` for `leaseMs` (atomically: of two requests at once,
   * one acquires), or tells what holds it. The lease frees the key of a request whose server died.
   */
  acquire(key: string, fingerprint: string, leaseMs: number): Promise<IdempotencyClaim> | IdempotencyClaim
  /** Stores the final answer for `ttlMs`, if `token` still holds the key. */
  complete(key: string, token: string, fingerprint: string, answer: StoredAnswer, ttlMs: number): Promise<void> | void
  /** Frees the key (a 5xx, a timeout, a client that left), if `token` still holds it. */
  release(key: string, token: string): Promise<void> | void
}

type MemoryEntry = { token: string; fingerprint: string; answer?: StoredAnswer; expires: number }

/**
 * The default store: one process's memory, bounded to `maxKeys` entries (the oldest finished key goes
 * first, as in the rate limiter's LRU; a running key is never dropped, and a store full of running
 * requests refuses new keys: a 503). Fine for one instance; a fleet shares Redis (`createRedisIdempotencyStore`).
 */
export function createMemoryIdempotencyStore(options: { maxKeys: number; now?: () => number }): IdempotencyStore {
  const entries = new Map<string, MemoryEntry>()
  const now = options.now ?? Date.now
  const live = (key: string): MemoryEntry | undefined => {
    const entry = entries.get(key)
    if (entry && entry.expires <= now()) {
      entries.delete(key)
      return undefined
    }
    return entry
  }
  // The oldest finished (or expired) key goes; a running one never does: dropping it would let a
  // repeat of a request still in progress run a second time.
  const makeRoom = () => {
    for (const [key, entry] of entries) {
      if (entry.answer || entry.expires <= now()) {
        entries.delete(key)
        return
      }
    }
    throw new Error(`the in-memory store holds ${options.maxKeys} requests still running (rest.idempotency.maxKeys)`)
  }
  const put = (key: string, entry: MemoryEntry) => {
    entries.delete(key)
    if (entries.size >= options.maxKeys) makeRoom()
    entries.set(key, entry)
  }
  return {
    acquire(key, fingerprint, leaseMs) {
      const entry = live(key)
      if (entry) return entry.answer ? { state: 'done', fingerprint: entry.fingerprint, answer: entry.answer } : { state: 'running', fingerprint: entry.fingerprint }
      const token = randomUUID()
      put(key, { token, fingerprint, expires: now() + leaseMs })
      return { state: 'acquired', token }
    },
    complete(key, token, fingerprint, answer, ttlMs) {
      const entry = live(key)
      if (entry && entry.token !== token) return
      put(key, { token, fingerprint, answer, expires: now() + ttlMs })
    },
    release(key, token) {
      if (live(key)?.token === token) entries.delete(key)
    },
  }
}

/** The part of an ioredis client the Redis store calls (structural: ioredis is not a dependency). */
export interface IdempotencyRedis {
  set(key: string, value: string, px: 'PX', ms: number, nx: 'NX'): Promise<string | null>
  get(key: string): Promise<string | null>
  eval(script: string, numberOfKeys: number, ...args: Array<string | number>): Promise<unknown>
}

// Replaces the record only while `token` still holds the key (a lease that ran out may have passed it on).
const COMPLETE = `local v = redis.call('GET', KEYS[1])
if v and cjson.decode(v).t ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`
const RELEASE = `local v = redis.call('GET', KEYS[1])
if v and cjson.decode(v).t == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`

type RedisRecord = { t: string; f: string; s?: number; b?: string }

/**
 * Keys shared by every instance on one Redis: `SET key value NX PX lease` takes a key atomically, the
 * answer replaces it with a TTL. Keys are `prefix` + a hash of the principal and the key.
 */
export function createRedisIdempotencyStore(redis: IdempotencyRedis, options: { prefix?: string } = {}): IdempotencyStore {
  const prefix = options.prefix ?? 'fa:idem:'
  return {
    async acquire(key, fingerprint, leaseMs) {
      const token = randomUUID()
      const record: RedisRecord = { t: token, f: fingerprint }
      // Twice at most: a record that expired between SET and GET leaves the key free again.
      for (let attempt = 0; attempt < 2; attempt++) {
        if ((await redis.set(prefix + key, JSON.stringify(record), 'PX', leaseMs, 'NX')) === 'OK') return { state: 'acquired', token }
        const held = await redis.get(prefix + key)
        if (held === null) continue
        const found = JSON.parse(held) as RedisRecord
        if (found.s === undefined || found.b === undefined) return { state: 'running', fingerprint: found.f }
        return { state: 'done', fingerprint: found.f, answer: { status: found.s, body: found.b } }
      }
      return { state: 'running', fingerprint }
    },
    async complete(key, token, fingerprint, answer, ttlMs) {
      const record: RedisRecord = { t: token, f: fingerprint, s: answer.status, b: answer.body }
      await redis.eval(COMPLETE, 1, prefix + key, token, JSON.stringify(record), ttlMs)
    },
    async release(key, token) {
      await redis.eval(RELEASE, 1, prefix + key, token)
    },
  }
}

/** A store call that does not settle within `ms` rejects (a stalled Redis is an outage, not a hang). */
export function withStoreTimeout<T>(call: () => Promise<T> | T, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`idempotency store did not answer within ${ms}ms`)), ms)
    Promise.resolve()
      .then(call)
      .then(
        (value) => {
          clearTimeout(timer)
          resolve(value)
        },
        (error: unknown) => {
          clearTimeout(timer)
          reject(error)
        },
      )
  })
}
