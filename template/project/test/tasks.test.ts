import t from 'tap'
import { buildApp, call } from './helpers.js'

const app = await buildApp(t)

t.test('tasks.create answers the new task', async (t) => {
  const { statusCode, body } = await call(app, 'tasks', 'create', { title: 'Write the first test' })
  t.equal(statusCode, 200)
  t.equal(body.status, true)
  t.match(body.data, { title: 'Write the first test', notes: null, done: false, id: String, createdAt: String })
})

t.test('tasks.create refuses a payload that fails its schema', async (t) => {
  const { statusCode, body } = await call(app, 'tasks', 'create', { title: '' })
  t.equal(statusCode, 400)
  t.equal(body.status, false)
  t.equal(body.message, 'Validation failed')
})

t.test('tasks.list answers a page that holds a new task', async (t) => {
  const created = await call(app, 'tasks', 'create', { title: 'Listed' })
  const { statusCode, body } = await call(app, 'tasks', 'list', { limit: 100 })
  t.equal(statusCode, 200)
  t.equal(body.status, true)
  t.ok(body.data.total >= 1)
  t.ok(body.data.items.some((task: { id: string }) => task.id === created.body.data.id))
})

t.test('tasks.get reads one task, and answers its declared 404 for an unknown id', async (t) => {
  const created = await call(app, 'tasks', 'create', { title: 'Read me' })
  const found = await call(app, 'tasks', 'get', { id: created.body.data.id })
  t.equal(found.statusCode, 200)
  t.equal(found.body.data.title, 'Read me')
  const id = '00000000-0000-4000-8000-000000000000'
  const missing = await call(app, 'tasks', 'get', { id })
  t.equal(missing.statusCode, 404)
  t.same(missing.body, { status: false, message: 'No such task', data: { code: 'NOT_FOUND', id } })
})

t.test('tasks.update changes a task', async (t) => {
  const created = await call(app, 'tasks', 'create', { title: 'Change me' })
  const { statusCode, body } = await call(app, 'tasks', 'update', { id: created.body.data.id, data: { done: true } })
  t.equal(statusCode, 200)
  t.match(body.data, { id: created.body.data.id, title: 'Change me', done: true })
})

t.test('tasks.delete removes a task', async (t) => {
  const created = await call(app, 'tasks', 'create', { title: 'Delete me' })
  const deleted = await call(app, 'tasks', 'delete', { id: created.body.data.id })
  t.equal(deleted.statusCode, 200)
  t.equal(deleted.body.data.id, created.body.data.id)
  const after = await call(app, 'tasks', 'get', { id: created.body.data.id })
  t.equal(after.statusCode, 404)
})

t.test('the one endpoint runs the same actions: POST /api/services', async (t) => {
  const response = await app.inject({ method: 'POST', url: '/api/services', payload: { intent: 'execute', service: 'tasks', action: 'list', payload: {} } })
  t.equal(response.statusCode, 200)
  t.equal(response.json().status, true)
})

t.test('GET /status answers', async (t) => {
  const response = await app.inject({ method: 'GET', url: '/status' })
  t.equal(response.statusCode, 200)
})
