import { eq } from 'drizzle-orm'
import { createAction, Err, handleError } from 'fastify-actions'
import { users } from '../../db/schema.js'
import { hashPassword } from './passwords.js'
import { accountMessages, Credentials, database, issueToken, SignedIn } from './shared.js'

export default createAction({
  name: 'signup',
  description: 'Creates an account and answers a token',
  validation: Credentials,
  output: SignedIn,
  handler: async (data) => {
    const db = database()
    const [existing] = await db.select({ id: users.id }).from(users).where(eq(users.username, data.username))
    if (existing) return Err(accountMessages.taken)
    try {
      const [user] = await db.insert(users).values({ username: data.username, passwordHash: await hashPassword(data.password) }).returning()
      return issueToken(user)
    } catch (error) {
      return handleError({ message: 'Could not create the account', data: { error: String(error) } })
    }
  },
})
