import t from 'tap'
import { ErrorCode, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js'
import { messages } from '../lib/index.js'
import { echoService } from './helpers/fixtures.js'
import { rawPost, startMcpServer } from './helpers/mcp.js'

const call = (id: number, name: string, args: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })
const versioned = { 'mcp-protocol-version': LATEST_PROTOCOL_VERSION }

t.test('hostile input answers protocol errors or 4xx, never a 5xx, and the server lives on', async (t) => {
  const server = await startMcpServer(t, { services: [echoService] })
  const { url } = server
  const alive = async (label: string) => {
    const answer = await rawPost(url, JSON.stringify(call(99, 'tasks_echo', { title: 'alive', count: 1 })), versioned)
    t.same(answer.json, { jsonrpc: '2.0', id: 99, result: { content: [{ type: 'text', text: '{"title":"alive","count":1}' }] } }, `alive after ${label}`)
  }

  await t.test('malformed JSON: -32700 from the route\'s own parser, not the envelope', async (t) => {
    for (const body of ['{"jsonrpc": "2.0", "id": 1, "method":', 'not json', '']) {
      const answer = await rawPost(url, body)
      t.equal(answer.status, 400)
      t.same(answer.json, { jsonrpc: '2.0', error: { code: ErrorCode.ParseError, message: messages.mcpParseError }, id: null }, JSON.stringify(body))
    }
    const noBody = await fetch(url, { method: 'POST', headers: { accept: 'application/json, text/event-stream' } })
    t.equal(noBody.status, 400, 'no body at all')
    t.equal((await noBody.json()).error.code, ErrorCode.ParseError)
    await alive('malformed JSON')
  })

  await t.test('__proto__ keys: refused as the REST endpoint refuses them', async (t) => {
    const bodies = [
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tasks_echo","arguments":{"__proto__":{"isAdmin":true},"title":"a","count":1}}}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tasks_echo","arguments":{"constructor":{"prototype":{"x":1}},"title":"a","count":1}}}',
    ]
    for (const body of bodies) {
      const answer = await rawPost(url, body, versioned)
      t.equal(answer.status, 400)
      t.equal(answer.json.error.code, ErrorCode.ParseError)
    }
    t.equal(({} as Record<string, unknown>).isAdmin, undefined, 'no prototype was polluted')
    await alive('__proto__')
  })

  await t.test('JSON-RPC batches: refused whole (-32600), so one HTTP request is one rate-limited call', async (t) => {
    for (const size of [1000, 100, 2, 1, 0]) {
      const batch = await rawPost(url, JSON.stringify(Array.from({ length: size }, (_, i) => call(i, 'tasks_list', {}))), versioned)
      t.equal(batch.status, 400, `a batch of ${size}`)
      t.same(batch.json, { jsonrpc: '2.0', error: { code: ErrorCode.InvalidRequest, message: messages.mcpInvalidRequest(messages.mcpNoBatches) }, id: null })
    }
    await alive('batches')
  })

  await t.test('a wrong protocol version header: 400 with a JSON-RPC error', async (t) => {
    const answer = await rawPost(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), { 'mcp-protocol-version': '1999-01-01' })
    t.equal(answer.status, 400)
    t.equal(answer.json.error.code, -32000)
    t.match(answer.json.error.message, /Unsupported protocol version/)
    const init = await rawPost(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '1999-01-01', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }))
    t.equal(init.status, 200, 'initialize with an unknown version is answered with the server\'s own version')
    t.equal(init.json.result.protocolVersion, LATEST_PROTOCOL_VERSION)
    await alive('wrong versions')
  })

  await t.test('huge arguments: over the body limit a 413 (HTTP, the envelope); under it, validation', async (t) => {
    const huge = await rawPost(url, JSON.stringify(call(1, 'tasks_echo', { title: 'x'.repeat(2 * 1024 * 1024), count: 1 })), versioned)
    t.equal(huge.status, 413)
    t.same(huge.json, { status: false, message: messages.bodyTooLarge, data: {} })
    const deep = '['.repeat(5000) + ']'.repeat(5000)
    const nested = await rawPost(url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tasks_echo","arguments":{"title":${deep},"count":1}}}`, versioned)
    // rest.maxDepth (64) holds as on the services endpoint: refused by the body parser, the same 400 envelope.
    t.equal(nested.status, 400)
    t.same(nested.json, { status: false, message: messages.jsonTooDeep(64), data: { maxDepth: 64 } })
    await alive('huge arguments')
  })

  await t.test('arguments that are not an object: -32602 with a short message, the action never runs', async (t) => {
    // The SDK alone would answer -32603 with its schema validator's whole report.
    for (const args of [[1, 2], 'text', 42, true, null]) {
      const answer = await rawPost(url, JSON.stringify(call(7, 'tasks_echo', args)), versioned)
      t.equal(answer.status, 200)
      t.same(answer.json, { jsonrpc: '2.0', id: 7, error: { code: ErrorCode.InvalidParams, message: messages.mcpArgumentsNotObject } }, JSON.stringify(args))
    }
    const noName = await rawPost(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} }), versioned)
    t.same(noName.json, { jsonrpc: '2.0', id: 1, error: { code: ErrorCode.InvalidParams, message: messages.mcpNameNotString } })
    await alive('non-object arguments')
  })

  await t.test('not JSON-RPC, unknown methods, wrong media types, GET and DELETE', async (t) => {
    const notRpc = await rawPost(url, JSON.stringify({ hello: 'world' }), versioned)
    t.equal(notRpc.status, 400)
    t.equal(notRpc.json.error.code, ErrorCode.ParseError, "the SDK's answer to a body that is not a JSON-RPC message")
    const unknown = await rawPost(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/list' }), versioned)
    t.equal(unknown.json.error.code, ErrorCode.MethodNotFound, 'capabilities are honest: no resources')
    const textPlain = await rawPost(url, JSON.stringify(call(1, 'tasks_list', {})), { 'content-type': 'text/plain' })
    t.equal(textPlain.status, 415)
    const noAccept = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(call(1, 'tasks_list', {})) })
    t.equal(noAccept.status, 406)
    for (const method of ['GET', 'DELETE']) {
      const answer = await fetch(url, { method, headers: { accept: 'text/event-stream' } })
      t.equal(answer.status, 405, method)
      t.equal(answer.headers.get('allow'), 'POST')
      t.same(await answer.json(), { jsonrpc: '2.0', error: { code: -32000, message: messages.mcpMethodNotAllowed }, id: null })
    }
    await alive('protocol misuse')
  })

  await t.test('a client that hangs up mid-call does not crash the server', async (t) => {
    const controller = new AbortController()
    const pending = fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...versioned },
      body: JSON.stringify(call(1, 'tasks_list', {})),
      signal: controller.signal,
    }).catch((error: Error) => error)
    controller.abort()
    t.type(await pending, Error)
    await alive('an aborted request')
  })
})
