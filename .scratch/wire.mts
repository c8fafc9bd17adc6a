import Type from 'typebox'
import { createAction, createServer, Err } from '/work/wt-streams-client/lib/index.js'
const progress = createAction({
  name: 'progress', description: 'x',
  validation: Type.Object({ steps: Type.Integer({ minimum: 1, maximum: 100 }) }),
  output: Type.Object({ step: Type.Integer(), of: Type.Integer() }),
  handler: async function* (data, context) {
    for (let step = 1; step <= data.steps; step++) {
      if (context.signal.aborted) return Err('stopped')
      yield { step, of: data.steps, extra: 1 } as any
    }
    return { done: data.steps }
  },
})
const server = await createServer({ serverName: 'x', logServices: false, services: [{ name: 'jobs', description: 'd', actions: [progress] }], rest: { baseUrl: '/api', allowedOrigins: [] } })
const r = await server.rest!.app.inject({ method: 'POST', url: '/api/services', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, payload: { intent: 'execute', service: 'jobs', action: 'progress', payload: { steps: 2 } } })
console.log(r.statusCode, r.headers, JSON.stringify(r.body))
const r2 = await server.rest!.app.inject({ method: 'POST', url: '/api/services', headers: { 'content-type': 'application/json' }, payload: { intent: 'execute', service: 'jobs', action: 'progress', payload: { steps: 2 } } })
console.log(r2.statusCode, r2.body)
await server.close()
