import t from 'tap'
import { Err, getContext, handleError, messages, type LogEntry, type ServiceLogger } from '../lib/index.js'
import { buildServer } from './helpers/server.js'

/** A logger that records every entry and answers ids `log-1`, `log-2`, … */
function recordingLogger() {
  const entries: Array<LogEntry & { level: string }> = []
  const write = (level: string) => (entry: LogEntry) => {
    entries.push({ level, ...entry })
    return `log-${entries.length}`
  }
  const logger: ServiceLogger = { info: write('info'), warn: write('warn'), error: write('error') }
  return { logger, entries }
}

// These run in order: the first ones need a process in which no server was created yet.
t.test('before createServer, without a logger, it throws', async (t) => {
  t.throws(() => getContext(), { message: messages.notInitialized })
  t.throws(() => handleError({ message: 'boom' }), { message: messages.noLogger })
})

t.test('a given logger works before createServer and gets { atFunction, message, data }', async (t) => {
  const { logger, entries } = recordingLogger()
  const result = handleError({ message: 'Task not saved', data: { id: 7 }, logger, atFunction: 'tasks.save' })
  t.same(result, Err('[log-1] Task not saved'))
  t.same(entries, [{ level: 'error', atFunction: 'tasks.save', message: 'Task not saved', data: { id: 7 } }])
})

t.test('atFunction is read from the stack when not given', async (t) => {
  const { logger, entries } = recordingLogger()
  function saveTask() {
    return handleError({ message: 'a', logger })
  }
  const store = {
    persist() {
      return handleError({ message: 'b', logger })
    },
  }
  class TaskStore {
    remove() {
      return handleError({ message: 'c', logger })
    }
  }
  const arrow = () => handleError({ message: 'd', logger })
  async function later() {
    await Promise.resolve()
    return handleError({ message: 'e', logger })
  }
  saveTask()
  store.persist()
  new TaskStore().remove()
  arrow()
  await later()
  ;[0].map(() => handleError({ message: 'f', logger }))
  t.same(
    entries.map((entry) => entry.atFunction),
    ['saveTask', 'persist', 'TaskStore.remove', 'arrow', 'later', 'anonymous'],
  )
  t.same(
    entries.map((entry) => entry.data),
    [undefined, undefined, undefined, undefined, undefined, undefined],
  )
})

t.test("after createServer it uses the context's resources.logger", async (t) => {
  const { logger, entries } = recordingLogger()
  const server = await buildServer({ resources: { logger } })
  t.teardown(() => server.close())
  t.same(handleError({ message: 'from the context', atFunction: 'x' }), Err('[log-1] from the context'))
  t.equal(entries.length, 1)

  const other = recordingLogger()
  t.same(handleError({ message: 'explicit wins', atFunction: 'y', logger: other.logger }), Err('[log-1] explicit wins'))
  t.equal(entries.length, 1, 'the context logger was not used')
  t.equal(other.entries.length, 1)
})

t.test('a server without a logger: it throws', async (t) => {
  const server = await buildServer()
  t.teardown(() => server.close())
  t.throws(() => handleError({ message: 'boom' }), { message: messages.noLogger })
})
