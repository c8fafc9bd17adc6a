import { setFlagsFromString } from 'node:v8'
import t from 'tap'
import { toExternalResponse } from '../lib/answer.js'
import { messages } from '../lib/messages.js'
import { Ok } from '../lib/result.js'

/**
 * V8's own check that a string is flat (not a rope), where this V8 has it (V8 12 and later: Node 24
 * and 26; Node 20's V8 11 has no such native). Natives syntax is allowed only for functions compiled
 * after the flag is set, so the check is compiled here, at run time.
 */
function flatCheck(): ((value: string) => boolean) | undefined {
  setFlagsFromString('--allow-natives-syntax')
  try {
    return new Function('value', 'return %StringIsFlat(value)') as (value: string) => boolean
  } catch {
    return undefined
  } finally {
    setFlagsFromString('--no-allow-natives-syntax')
  }
}

const names = ['tasks', 'echo', 'a-service-with-a-long-name', 'an-action-with-a-long-name']

t.test('the success message keeps the exact text of the specification', async (t) => {
  t.equal(messages.executed(names[0], names[1]), "Action 'tasks.echo' executed")
  t.equal(messages.executed(names[2], names[3]), "Action 'a-service-with-a-long-name.an-action-with-a-long-name' executed")
})

const isFlat = flatCheck()

t.test('the success message is one flat string, not a rope', { skip: isFlat ? false : `V8 ${process.versions.v8} has no %StringIsFlat` }, async (t) => {
  if (!isFlat) return
  // A template literal of the same parts is a rope: the check tells them apart.
  const rope = `Action '${names[0]}.${names[1]}' executed`
  t.equal(isFlat(rope), false, 'a template literal makes a rope')
  // A rope in an answer sends Node 26's JSON.stringify down its slower path for the whole answer.
  t.equal(isFlat(messages.executed(names[0], names[1])), true)
  t.equal(isFlat(messages.executed(names[2], names[3])), true)
  const envelope = toExternalResponse(Ok({ items: [1, 2, 3] }), names[0], names[1])
  t.equal(isFlat(envelope.message), true, 'the envelope of an Ok carries the flat message')
  t.same(envelope, { status: true, message: "Action 'tasks.echo' executed", data: { items: [1, 2, 3] } })
})
