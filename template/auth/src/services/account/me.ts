import Type from 'typebox'
import { createAction, Err, Ok } from 'fastify-actions'
import { accountMessages } from './shared.js'

export default createAction({
  name: 'me',
  description: 'The signed-in user (needs a token)',
  isProtected: true,
  output: Type.Object({ userId: Type.String(), username: Type.Union([Type.String(), Type.Null()]) }),
  handler: (_data, context) => {
    const user = context.getUser()
    if (!user) return Err(accountMessages.notSignedIn)
    return Ok({ userId: user.userId, username: typeof user.username === 'string' ? user.username : null })
  },
})
