import t from 'tap'
import { buildApp, call } from './helpers.js'

const app = await buildApp(t)
const username = `ada${Date.now()}`

t.test('account.signup answers a token; a taken username is refused', async (t) => {
  const { statusCode, body } = await call(app, 'account', 'signup', { username, password: 'correct horse' })
  t.equal(statusCode, 200)
  t.match(body.data, { user: { id: String, username }, token: String })
  const again = await call(app, 'account', 'signup', { username, password: 'correct horse' })
  t.equal(again.statusCode, 400)
  t.equal(again.body.message, 'That username is taken')
})

t.test('account.login answers a token that opens the protected account.me', async (t) => {
  const login = await call(app, 'account', 'login', { username, password: 'correct horse' })
  t.equal(login.statusCode, 200)
  const me = await call(app, 'account', 'me', {}, { authorization: `Bearer ${login.body.data.token}` })
  t.equal(me.statusCode, 200)
  t.same(me.body.data, { userId: login.body.data.user.id, username })
})

t.test('a wrong password is refused', async (t) => {
  const { statusCode, body } = await call(app, 'account', 'login', { username, password: 'wrong password' })
  t.equal(statusCode, 400)
  t.equal(body.message, 'Wrong username or password')
})

t.test('account.me without a token answers 401', async (t) => {
  const { statusCode, body } = await call(app, 'account', 'me')
  t.equal(statusCode, 401)
  t.equal(body.status, false)
})
