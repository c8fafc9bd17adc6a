import { eq } from 'drizzle-orm'
import { createAction, Err } from 'fastify-actions'
import { users } from '../../db/schema.js'
import { checkPassword } from './passwords.js'
import { accountMessages, Credentials, database, issueToken, SignedIn } from './shared.js'

export default createAction({
  name: 'login',
  description: 'Signs in: answers a token',
  validation: Credentials,
  output: SignedIn,
  handler: async (data) => {
    const [user] = await database().select().from(users).where(eq(users.username, data.username))
    // The same answer for an unknown name and a wrong password: no account probing.
    if (!user || !(await checkPassword(data.password, user.passwordHash))) return Err(accountMessages.wrongCredentials)
    return issueToken(user)
  },
})
