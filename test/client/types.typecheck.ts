// Compiled by `tsc --noEmit`: an unused @ts-expect-error fails the build, so each marked line
// proves the client refuses it. No request is sent: the calls sit in a function never called.
import Type from 'typebox'
import { z } from 'zod'
import { createAction, createService, createServices, Err, Ok, type Service } from '../../lib/index.js'
import { createClient, isOk, type Client } from '../../lib/client/index.js'

const create = createAction({
  name: 'create',
  description: '',
  validation: Type.Object({ title: Type.String(), notes: Type.Optional(Type.String()) }),
  handler: (data) => Ok({ id: 'x', title: data.title, createdAt: new Date(), size: 1n }),
})
const count = createAction({ name: 'count', description: '', handler: () => Ok(42) })
const names = createAction({ name: 'names', description: '', handler: () => Ok(['a', 'b']) })
const boxed = createAction({ name: 'boxed', description: '', handler: () => Ok({ result: 'sole key' }) })
const refuse = createAction({ name: 'refuse', description: '', handler: () => Err('no') })
const loose = createAction({ name: 'loose', description: '', handler: () => Ok(JSON.parse('{}') as any) })
const nothing = createAction({ name: 'nothing', description: '', handler: () => Ok(undefined) })
const tagged = createAction({
  name: 'tagged',
  description: 'zod: the client sends the input type (tags may be left out), the handler gets the output',
  validation: z.object({ tags: z.array(z.string()).default([]), at: z.string().transform((text) => new Date(text)) }),
  handler: (data) => Ok({ count: data.tags.length, year: data.at.getFullYear() }),
})
const hidden = createAction({ name: 'hidden', description: '', visibility: { rest: false }, handler: () => Ok({}) })
const attach = createAction({
  name: 'attach',
  description: '',
  isSpecial: { contentType: 'multipart/form-data' },
  validation: Type.Object({ fields: Type.Object({ taskId: Type.String() }), files: Type.Object({ file: Type.Any() }) }),
  handler: () => Ok({ stored: 1 }),
})

const services = createServices([
  createService({ name: 'tasks', description: '', actions: [create, count, names, boxed, refuse, tagged, hidden, attach, loose, nothing] }),
  createService({ name: 'other', description: '', actions: [count] }),
])

export async function typed() {
  const client = createClient<typeof services>({ baseUrl: 'http://localhost/api' })
  const made = await client.tasks.create({ title: 'a' })
  if (isOk(made)) {
    const title: string = made.value.title
    const createdAt: string = made.value.createdAt // a Date travels as a string
    const size: string = made.value.size // a bigint too (the server's rule)
    // @ts-expect-error the client does not pretend a Date survived JSON
    const date: Date = made.value.createdAt
    // @ts-expect-error `titel` is not in the output
    made.value.titel
    void [title, createdAt, size, date]
  } else {
    const status: number = made.error.httpStatus
    const message: string = made.error.message
    void [status, message]
  }
  // @ts-expect-error `titel` is not a field of the payload
  await client.tasks.create({ titel: 'a' })
  // @ts-expect-error `title` is required
  await client.tasks.create({})
  // @ts-expect-error `title` is a string
  await client.tasks.create({ title: 1 })
  // @ts-expect-error no action `creat`
  await client.tasks.creat({ title: 'a' })
  // @ts-expect-error no service `task`
  await client.task.create({ title: 'a' })
  // @ts-expect-error hidden actions (visibility.rest: false) are not on the client
  await client.tasks.hidden()
  // @ts-expect-error upload actions go through client.upload
  await client.tasks.attach({})

  const counted = await client.tasks.count()
  if (counted.ok) {
    const n: number = counted.value // Ok(42) arrives as data.result and is unwrapped
    void n
  }
  const listed = await client.tasks.names()
  if (listed.ok) listed.value satisfies string[]
  const sole = await client.tasks.boxed()
  if (sole.ok) sole.value satisfies string // the documented ambiguity: a sole non-object `result` is unwrapped
  const anything = await client.tasks.loose()
  if (anything.ok) anything.value satisfies { any: 'thing' } // `any` stays `any`
  const none = await client.tasks.nothing()
  if (none.ok) none.value satisfies Record<string, never> // Ok(undefined) arrives as {}
  await client.tasks.tagged({ at: '2024-01-01' }) // zod input type: `tags` has a default
  // @ts-expect-error zod input type: `at` is a string before the transform
  await client.tasks.tagged({ at: new Date() })
  const tags = await client.tasks.tagged({ at: '2024-01-01', tags: ['x'] })
  if (tags.ok) tags.value satisfies { count: number; year: number }
  await client.other.count(undefined, { timeout: 100, signal: AbortSignal.timeout(1000), headers: { 'x-a': '1' } })

  const uploaded = await client.upload('tasks', 'attach', { files: { file: new Blob(['x']) }, fields: { taskId: 'x' } })
  if (uploaded.ok) uploaded.value satisfies { stored: number }
  // @ts-expect-error the schema's field is `taskId`
  await client.upload('tasks', 'attach', { files: { file: new Blob(['x']) }, fields: { task: 'x' } })
  // @ts-expect-error `create` is not an upload action
  await client.upload('tasks', 'create', { files: {} })
  const dynamic = await client.invoke('tasks', 'anything', { a: 1 })
  if (dynamic.ok) dynamic.value satisfies unknown
  await client.explore('*')
  await client.schema('tasks', '*', { discoverySecret: 's' })
  // `await client` must not send anything: the proxy has no `then`.
  const awaited: Client<typeof services> = client
  void awaited
}

export async function untyped(services: Service[]) {
  const client = createClient({ baseUrl: '/api' })
  const answer = await client.anything.goes({ a: 1 })
  if (answer.ok) answer.value satisfies unknown
  await createClient<typeof services>({ baseUrl: '/api' }).x.y()
}

export function reserved() {
  const clash = createServices([createService({ name: 'upload', description: '', actions: [count] })])
  // @ts-expect-error a service named like a client method is refused
  createClient<typeof clash>({ baseUrl: '/api' })
}

export async function example(client: Client<import('../../example/services/index.js').ExampleServices>) {
  const added = await client.tasks.add({ title: 'x' })
  if (added.ok) added.value.createdAt satisfies string
  // @ts-expect-error greetings.normalize is a hook hidden from REST
  await client.greetings.normalize({})
  // @ts-expect-error account.login needs a password
  await client.account.login({ username: 'a' })
  await client.upload('tasks', 'attach', { files: { file: new Blob(['x']) }, fields: { taskId: 'id' } })
}
