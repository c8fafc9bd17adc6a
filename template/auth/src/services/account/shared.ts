import Type from 'typebox'
import { getContext, Ok, signToken } from 'fastify-actions'
import type { Db } from '../../db/client.js'

export const accountMessages = {
  taken: 'That username is taken',
  wrongCredentials: 'Wrong username or password',
  notSignedIn: 'Not signed in',
} as const

/** The context's database (src/config.ts: `resources.database`). */
export const database = () => getContext<Db>().resources.database as Db

export const Credentials = Type.Object(
  {
    username: Type.String({ minLength: 3, maxLength: 50, pattern: '^[A-Za-z0-9_.-]+$' }),
    password: Type.String({ minLength: 8, maxLength: 200 }),
  },
  { additionalProperties: false },
)

export const SignedIn = Type.Object({
  user: Type.Object({ id: Type.String(), username: Type.String() }),
  token: Type.String(),
})

/** A JWT for the user (`sub` is the user id): send it as `Authorization: Bearer <token>`. */
export function issueToken(user: { id: string; username: string }) {
  const token = signToken({ sub: user.id, username: user.username }, { expiresIn: '8h' })
  if (!token.ok) return token
  return Ok({ user: { id: user.id, username: user.username }, token: token.value })
}
