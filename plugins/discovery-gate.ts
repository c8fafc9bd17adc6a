import { createHash, timingSafeEqual } from 'node:crypto'
import { fail, type Failure } from '../lib/errors.js'

/** Constant-time, and the digests have one length, so not even the secret's length shows. */
function sameSecret(given: unknown, expectedDigest: Buffer): boolean {
  return typeof given === 'string' && timingSafeEqual(createHash('sha256').update(given).digest(), expectedDigest)
}

/**
 * The gate of everything that reveals the actions (the `explore` and `schema` intents, the OpenAPI
 * document and page): refused while discovery is off; with a secret, refused unless `given` is it.
 * Built once at boot; answers undefined when the request may pass.
 */
export function createDiscoveryGate(discovery: { readonly enabled: boolean; readonly secret?: string }): (given: unknown) => Failure | undefined {
  const digest = discovery.secret === undefined ? undefined : createHash('sha256').update(discovery.secret).digest()
  return (given) => {
    if (!discovery.enabled) return fail.discoveryDisabled()
    if (digest && !sameSecret(given, digest)) return fail.discoverySecret()
    return undefined
  }
}
