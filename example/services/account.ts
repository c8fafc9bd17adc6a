import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import { promisify } from 'node:util'
import { eq } from 'drizzle-orm'
import Type from 'typebox'
import { clearTokenCookie, createAction, createService, Err, getContext, handleError, Ok, signToken } from '../../lib/index.js'
import type { Db } from '../db.js'
import { users } from '../schema.js'

// Accounts of the web page: passwords hashed with scrypt, a JWT issued by signToken into the auth
// cookie (HttpOnly, so page scripts never see it) and in the answer (for API callers).

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, length: number) => Promise<Buffer>
const TOKEN_LIFETIME = '8h'

export const accountMessages = {
  taken: 'That username is taken',
  wrongCredentials: 'Wrong username or password',
} as const

async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const hash = await scryptAsync(password, salt, 32)
  return `scrypt:${salt.toString('base64url')}:${hash.toString('base64url')}`
}

async function checkPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, salt, hash] = stored.split(':')
  if (scheme !== 'scrypt' || !salt || !hash) return false
  const expected = Buffer.from(hash, 'base64url')
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64url'), expected.length)
  return timingSafeEqual(actual, expected)
}

const database = () => getContext<Db>().resources.database as Db

const Credentials = Type.Object(
  {
    username: Type.String({ minLength: 3, maxLength: 50, pattern: '^[A-Za-z0-9_.-]+$' }),
    password: Type.String({ minLength: 4, maxLength: 200 }),
  },
  { additionalProperties: false },
)

/** Signs the user in: the token goes into the auth cookie and into the answer. */
function issue(user: { id: string; username: string }) {
  const token = signToken({ sub: user.id, username: user.username }, { expiresIn: TOKEN_LIFETIME, cookie: true })
  if (!token.ok) return token
  return Ok({ user: { id: user.id, username: user.username }, token: token.value })
}

const signup = createAction({
  name: 'signup',
  description: 'Creates an account and signs it in (cookie and token)',
  validation: Credentials,
  handler: async (data) => {
    const db = database()
    const [existing] = await db.select({ id: users.id }).from(users).where(eq(users.username, data.username))
    if (existing) return Err(accountMessages.taken)
    try {
      const [user] = await db.insert(users).values({ username: data.username, passwordHash: await hashPassword(data.password) }).returning()
      return issue(user)
    } catch (error) {
      return handleError({ message: 'Could not create the account', data: { error: String(error) } })
    }
  },
})

const login = createAction({
  name: 'login',
  description: 'Signs in: sets the auth cookie and answers the token',
  validation: Credentials,
  handler: async (data) => {
    const [user] = await database().select().from(users).where(eq(users.username, data.username))
    // The same answer for an unknown name and a wrong password: no account probing.
    if (!user || !(await checkPassword(data.password, user.passwordHash))) return Err(accountMessages.wrongCredentials)
    return issue(user)
  },
})

const logout = createAction({
  name: 'logout',
  description: 'Clears the auth cookie',
  handler: () => {
    const cleared = clearTokenCookie()
    return cleared.ok ? Ok({ signedOut: true }) : cleared
  },
})

const me = createAction({
  name: 'me',
  description: 'The signed-in user (JWT)',
  isProtected: true,
  handler: (_data, context) => {
    const user = context.getUser()
    if (!user) return Err('Not signed in')
    return Ok({ userId: user.userId, username: typeof user.username === 'string' ? user.username : null })
  },
})

export const accountService = createService({
  name: 'account',
  description: 'Sign up, log in and out: signToken issues the JWT',
  actions: [signup, login, logout, me],
})
