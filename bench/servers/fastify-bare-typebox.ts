/**
 * fastify-bare-typebox: fastify-bare (the same routes, validated by Fastify's Ajv) in a process that has
 * also loaded what an application writing its schemas with TypeBox loads: `typebox` (its `Type`) and
 * `typebox/schema` (the compiler fastify-actions validates with), with the bench's task schema compiled
 * once. The memory baseline of such an application: fastify-actions validates with TypeBox, so bare
 * Fastify without it is missing about 8 MiB of modules that are not the framework's (docs/benchmarks.md).
 */
import Type from 'typebox'
import { Compile } from 'typebox/schema'

const Task = Type.Object({ title: Type.String({ minLength: 1 }), count: Type.Integer({ minimum: 0 }) })
const check = Compile(Task)
if (!check.Check({ title: 'loaded', count: 1 })) throw new Error('fastify-bare-typebox: the TypeBox check does not pass')
await import('./fastify-bare.js')
