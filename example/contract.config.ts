/**
 * The example's config as `fastify-actions contract` and `diff` read it (the repository's own
 * `npm run contract` / `npm run contract:check`): its services and what callers see of it, without
 * the database, Redis or the page. The snapshot is example/contract.json.
 */
import { randomBytes } from 'node:crypto'
import type { ServerConfig } from '../lib/index.js'
import { exampleSurfaces } from './surfaces.js'
import { services } from './services/index.js'

const config: ServerConfig = {
  serverName: 'fastify-actions example',
  services,
  auth: { secret: randomBytes(32).toString('base64url'), method: 'cookie' },
  rest: { ...exampleSurfaces, allowedOrigins: [] },
}

export default config
