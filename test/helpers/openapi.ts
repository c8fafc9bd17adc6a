import Type from 'typebox'
import { z } from 'zod'
import { createAction, createService, Ok, type Service } from '../../lib/index.js'
import { echoService } from './fixtures.js'

/** A service with every feature the document describes: protected, hidden, upload, no schema, Standard Schema, output schemas. */
export const Profile = Type.Object({ id: Type.Integer(), name: Type.String() })

export const everything = createService({
  name: 'people',
  description: 'People, with every feature of the document',
  actions: [
    createAction({
      name: 'get',
      description: 'One person by id (TypeBox input and output)',
      validation: Type.Object({ id: Type.Integer({ minimum: 1 }) }),
      output: Profile,
      // The extra field is not in the output schema: the serializer drops it.
      handler: (data) => Ok({ id: data.id, name: 'Ada', password: 'secret' }),
    }),
    createAction({
      name: 'count',
      description: 'How many people (a non-object output: data.result)',
      output: Type.Integer(),
      handler: () => Ok(3),
    }),
    createAction({
      name: 'find',
      description: 'Find by name (zod input and output)',
      validation: z.object({ name: z.string().min(1) }),
      output: z.object({ matches: z.array(z.string()) }),
      handler: (data) => Ok({ matches: [data.name] }),
    }),
    createAction({ name: 'loose', description: 'No schema at all', handler: (data) => Ok({ got: data }) }),
    createAction({ name: 'me', description: 'The caller (protected)', isProtected: true, handler: () => Ok({ ok: true }) }),
    createAction({ name: 'secret', description: 'Hidden from REST', visibility: { rest: false }, handler: () => Ok({ hidden: true }) }),
    createAction({
      name: 'avatar',
      description: 'Upload an avatar',
      isSpecial: { contentType: 'multipart/form-data' },
      handler: (data) => Ok({ files: Object.keys((data as { files: Record<string, unknown> }).files) }),
    }),
  ],
})

export const everythingServices: Service[] = [echoService, everything]
