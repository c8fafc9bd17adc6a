/**
 * Compiled by `tsc --noEmit` in `npm test`, never run: `server.rest` is typed present exactly when
 * `rest` is given, the app has `fetch`, the plugin takes the same config and `getActions` is typed.
 */
import Fastify from 'fastify'
import fastifyActions, { createServer, getActions, type ActionsHandle, type ServerConfig, type ServerInstance } from '../../lib/index.js'
import { echoService } from '../helpers/fixtures.js'

export async function typed(): Promise<void> {
  const withRest = await createServer({ serverName: 'x', services: [echoService], rest: { baseUrl: '/api', allowedOrigins: [] } })
  const response: Response = await withRest.rest.app.fetch('/api/services') // no `!`
  void response
  withRest.rest.addMiddleware('*', async (c, next) => {
    const header: string | undefined = c.req.header('x-test')
    void header
    await next()
  })

  const withoutRest = await createServer({ serverName: 'x', services: [echoService] })
  // @ts-expect-error without `rest` there is no REST interface to reach
  void withoutRest.rest.app

  const maybe: ServerConfig = { serverName: 'x', services: [echoService] }
  const unknownShape: ServerInstance = await createServer(maybe)
  // @ts-expect-error a config typed without a literal `rest` gives an optional `rest`
  void unknownShape.rest.app
  void unknownShape.rest?.app.fetch

  const app = Fastify()
  await app.register(fastifyActions, { prefix: '/v1', serverName: 'x', services: [echoService] })
  const handle: ActionsHandle = getActions(app, '/v1')
  void handle.fetch('/v1/services')
  // @ts-expect-error the plugin decorates nothing onto the user's instance
  void app.fetch
  // @ts-expect-error the plugin takes createServer's config: services are required
  await app.register(fastifyActions, { serverName: 'x' })
}
