import type { AddressInfo } from 'node:net'
import Type from 'typebox'
import {
  createAction,
  createService,
  createServices,
  Err,
  Ok,
  signToken,
  UploadedFile,
  UploadedFiles,
  type RestRequestContext,
} from '../../lib/index.js'
import { buildServer, type TestConfig } from '../helpers/server.js'

const add = createAction({
  name: 'add',
  description: 'Adds two integers',
  validation: Type.Object({ a: Type.Integer(), b: Type.Integer() }, { additionalProperties: false }),
  handler: (data) => Ok({ sum: data.a + data.b }),
})
const answer = createAction({ name: 'answer', description: 'A primitive Ok value', handler: () => Ok(42) })
const letters = createAction({ name: 'letters', description: 'An array Ok value', handler: () => Ok(['a', 'b']) })
const refuse = createAction({ name: 'refuse', description: 'Always Err', handler: () => Err('refused on purpose') })
const slow = createAction({
  name: 'slow',
  description: 'Answers after ms milliseconds',
  validation: Type.Object({ ms: Type.Integer({ minimum: 0, maximum: 5000 }) }),
  handler: async (data) => {
    await new Promise((resolve) => setTimeout(resolve, data.ms))
    return Ok({ waited: data.ms })
  },
})
const headers = createAction({
  name: 'headers',
  description: 'Answers the request headers it was sent',
  handler: (_data, context) => {
    const { req } = context.get<RestRequestContext>('rest')!
    return Ok({ contentType: req.headers['content-type'] ?? null, custom: req.headers['x-custom'] ?? null, authorization: req.headers.authorization ?? null })
  },
})
const hidden = createAction({ name: 'hidden', description: 'Hidden from REST discovery', visibility: { rest: false }, handler: () => Ok({ hidden: true }) })

export const calc = createService({ name: 'calc', description: 'Arithmetic and result kinds', actions: [add, answer, letters, refuse, slow, headers, hidden] })

const me = createAction({
  name: 'me',
  description: 'The signed-in user',
  isProtected: true,
  handler: (_data, context) => Ok({ userId: context.getUser()!.userId }),
})
const login = createAction({
  name: 'login',
  description: 'Issues a token (and the cookie when auth reads cookies)',
  validation: Type.Object({ user: Type.String(), cookie: Type.Optional(Type.Boolean()) }),
  handler: (data) => {
    const token = signToken({ sub: data.user }, { expiresIn: '1h', cookie: data.cookie === true })
    return token.ok ? Ok({ token: token.value }) : token
  },
})
export const account = createService({ name: 'account', description: 'Auth', actions: [me, login] })

const summary = (file: File) => ({ name: file.name, type: file.type, size: file.size, text: '' })
const attach = createAction({
  name: 'attach',
  description: 'Takes one or more files and a note',
  isSpecial: { contentType: 'multipart/form-data', uploadMode: 'flat' },
  validation: Type.Object({ fields: Type.Object({ note: Type.String() }), files: Type.Object({ file: UploadedFiles }) }),
  handler: async (data) => {
    const files = Array.isArray(data.files.file) ? data.files.file : [data.files.file]
    const described = await Promise.all(files.map(async (file) => ({ ...summary(file), text: await file.text() })))
    return Ok({ note: data.fields.note, files: described })
  },
})
const single = createAction({
  name: 'single',
  description: 'Exactly one file',
  isSpecial: { contentType: 'multipart/form-data' },
  validation: Type.Object({ fields: Type.Object({}), files: Type.Object({ file: UploadedFile }) }),
  handler: (data) => Ok(summary(data.files.file)),
})
export const docs = createService({ name: 'docs', description: 'Uploads', actions: [attach, single] })

export const services = createServices([calc, account, docs])
export type Services = typeof services

export const SECRET = 'client-test-secret'
export const DISCOVERY_SECRET = 'open-sesame'

/** A test server with the client fixtures: discovery with a secret, JWT auth by header unless told otherwise. */
export async function clientServer(overrides: TestConfig = {}) {
  return buildServer({
    services,
    auth: { secret: SECRET },
    ...overrides,
    rest: {
      discovery: { enabled: true, secret: DISCOVERY_SECRET },
      uploads: { limits: { maxFileSize: 64 }, allow: { mimeTypes: ['text/plain', 'application/pdf'], extensions: ['.txt', '.pdf'] } },
      ...(overrides.rest || {}),
    },
  })
}

/** Listens on a free loopback port; answers the base URL of the API. */
export async function listen(app: { listen: (options: { port: number; host: string }) => Promise<string>; server: { address: () => unknown } }): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  return `http://127.0.0.1:${port}/api`
}
