import { createService } from 'fastify-actions'
import loginAction from './login.js'
import meAction from './me.js'
import signupAction from './signup.js'

/** Accounts: signup and login answer a JWT (config.auth); `me` is protected. */
export const accountService = createService({
  name: 'account',
  description: 'Sign up and log in (JWT); me needs a token',
  actions: [signupAction, loginAction, meAction],
})
