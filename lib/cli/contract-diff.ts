/**
 * The rules of `fastify-actions diff`: two contracts in, one change per difference out, each with its
 * class for each consumer that sees the action: the typed client, REST callers, agents (MCP).
 * Schema changes are classified by direction (lib/cli/schema-changes.ts).
 */
import type { Contract, ContractAction } from './contract.js'
import { canonical, classifyFor, compareSchemas, type ChangeClass, type Direction } from './schema-changes.js'

export type Consumer = 'client' | 'rest' | 'agents'
export const CONSUMERS: readonly Consumer[] = ['client', 'rest', 'agents']

export interface ContractChange {
  /** `tasks.create`, or `*` for the whole API. */
  subject: string
  /** `input.title`, `output`, `errors.NOT_FOUND`, `route`, … */
  where: string
  what: string
  /** The class for each consumer that sees it. */
  consumers: Partial<Record<Consumer, ChangeClass>>
  /** What it means for the typed client, when that differs from the rest. */
  note?: string
}

const RANK: Record<ChangeClass, number> = { cosmetic: 0, expected: 1, additive: 2, breaking: 3 }

/** The worst class of a change over its consumers. */
export function classOf(change: ContractChange): ChangeClass {
  let worst: ChangeClass = 'cosmetic'
  for (const value of Object.values(change.consumers)) if (RANK[value] > RANK[worst]) worst = value
  return worst
}

/** Who sees an action: the client and REST callers when it is visible, agents when it is a tool. */
function consumersOf(action: ContractAction): Consumer[] {
  return CONSUMERS.filter((consumer) => (consumer === 'agents' ? action.tool !== null : action.visible))
}

const every = (consumers: readonly Consumer[], value: ChangeClass) => Object.fromEntries(consumers.map((consumer) => [consumer, value])) as Partial<Record<Consumer, ChangeClass>>

const isPastSunset = (action: ContractAction, now: number) => action.deprecated?.sunset !== undefined && Date.parse(action.deprecated.sunset) <= now

/** Every change from `before` (the snapshot) to `after` (the project now), sorted by subject. */
export function diffContracts(before: Contract, after: Contract, now: number = Date.now()): ContractChange[] {
  const changes = diffSurfaces(before, after)
  const names = [...new Set([...Object.keys(before.actions), ...Object.keys(after.actions)])].sort()
  for (const name of names) {
    const [was, is] = [before.actions[name], after.actions[name]]
    if (!is) changes.push(removal(name, was, consumersOf(was), 'removed', now))
    else if (!was) {
      if (consumersOf(is).length > 0) changes.push({ subject: name, where: 'action', what: 'new action', consumers: every(consumersOf(is), 'additive') })
    } else changes.push(...diffAction(name, was, is, now))
  }
  return changes
}

/** An action gone for some consumers: breaking, or expected once its sunset has passed. */
function removal(name: string, was: ContractAction, consumers: Consumer[], what: string, now: number): ContractChange {
  const expected = isPastSunset(was, now)
  const sunset = was.deprecated?.sunset
  const text = expected ? `${what} after its sunset (${sunset})` : was.deprecated ? `${what} while deprecated, before ${sunset ? `its sunset (${sunset})` : 'any sunset date'}` : what
  return { subject: name, where: 'action', what: text, consumers: every(consumers, expected ? 'expected' : 'breaking') }
}

function diffSurfaces(before: Contract, after: Contract): ContractChange[] {
  const changes: ContractChange[] = []
  if (before.endpoint !== after.endpoint) {
    changes.push({ subject: '*', where: 'endpoint', what: `the endpoint moved: ${before.endpoint} → ${after.endpoint}`, consumers: { client: 'breaking', rest: 'breaking' } })
  }
  if (before.mcp !== after.mcp) {
    const what = before.mcp === null ? `MCP served at ${after.mcp}` : after.mcp === null ? `MCP no longer served (was ${before.mcp})` : `the MCP endpoint moved: ${before.mcp} → ${after.mcp}`
    changes.push({ subject: '*', where: 'mcp', what, consumers: { agents: before.mcp === null ? 'additive' : 'breaking' } })
  }
  return changes
}

/** The changes of an action both contracts have. */
function diffAction(name: string, was: ContractAction, is: ContractAction, now: number): ContractChange[] {
  const changes: ContractChange[] = []
  const push = (where: string, what: string, consumers: Partial<Record<Consumer, ChangeClass>>, note?: string) => {
    if (Object.keys(consumers).length > 0) changes.push({ subject: name, where, what, consumers, ...(note ? { note } : {}) })
  }
  const lost = consumersOf(was).filter((consumer) => !consumersOf(is).includes(consumer))
  const gained = consumersOf(is).filter((consumer) => !consumersOf(was).includes(consumer))
  if (lost.length > 0) changes.push(removal(name, was, lost, was.visible && !is.visible ? 'hidden from REST (visibility.rest: false)' : 'no longer an MCP tool', now))
  if (gained.length > 0) push('action', gained.includes('rest') ? 'now visible to REST' : 'now an MCP tool', every(gained, 'additive'))
  const shared = consumersOf(was).filter((consumer) => consumersOf(is).includes(consumer))
  if (shared.length === 0) return changes
  const only = (...consumers: Consumer[]) => shared.filter((consumer) => consumers.includes(consumer))
  if (was.description !== is.description) push('description', 'description changed', every(shared, 'cosmetic'))
  if (was.route !== is.route) push('route', `route ${was.route} → ${is.route}`, every(only('rest'), 'breaking'))
  if (was.tool !== null && is.tool !== null && was.tool !== is.tool) push('tool', `tool name ${was.tool} → ${is.tool}`, every(only('agents'), 'breaking'))
  if (was.stream !== is.stream) push('stream', is.stream ? 'now a streaming action (answers an event stream)' : 'no longer streams (answers one value)', every(shared, 'breaking'))
  if (was.upload !== is.upload) push('upload', is.upload ? 'now takes a multipart upload' : 'no longer takes an upload', every(only('client', 'rest'), 'breaking'))
  changes.push(...diffAuth(name, was, is, shared))
  for (const [where, direction] of [['input', 'input'], ['output', 'output'], ['events', 'output']] as const) {
    changes.push(...schemaChanges(name, where, direction, was[where], is[where], shared))
  }
  changes.push(...diffErrors(name, was, is, shared))
  const notice = (action: ContractAction) => (action.deprecated ? canonical(action.deprecated) : '')
  if (notice(was) !== notice(is)) {
    const what = !is.deprecated ? 'no longer deprecated' : !was.deprecated ? `deprecated since ${is.deprecated.since}${is.deprecated.sunset ? `, sunset ${is.deprecated.sunset}` : ''}` : 'its deprecation changed'
    push('deprecated', what, every(shared, 'cosmetic'))
  }
  return changes
}

function diffAuth(name: string, was: ContractAction, is: ContractAction, shared: Consumer[]): ContractChange[] {
  const changes: ContractChange[] = []
  if (was.auth.protected !== is.auth.protected) {
    const what = is.auth.protected ? 'now protected: callers without a token are refused (401)' : 'no longer protected'
    changes.push({ subject: name, where: 'auth', what, consumers: every(shared, is.auth.protected ? 'breaking' : 'additive') })
  }
  const [roles, now] = [was.auth.accessControl, is.auth.accessControl]
  if (canonical(roles) !== canonical(now)) {
    // An empty list lets anyone in; a longer list lets more roles in; any other change shuts someone out.
    const wider = now.length === 0 || (roles.length > 0 && roles.every((role) => now.includes(role)))
    changes.push({ subject: name, where: 'auth.accessControl', what: `accessControl ${JSON.stringify(roles)} → ${JSON.stringify(now)}`, consumers: every(shared, wider ? 'additive' : 'breaking') })
  }
  return changes
}

/** One change per schema difference, classed by the direction the data flows. */
function schemaChanges(name: string, where: string, direction: Direction, was: unknown, is: unknown, shared: Consumer[]): ContractChange[] {
  return compareSchemas(was, is).map((change) => ({
    subject: name,
    where: change.path ? `${where}.${change.path}` : where,
    what: `${change.detail} (${describeEffect(direction, classifyFor(direction, change.effect))})`,
    consumers: every(shared, classifyFor(direction, change.effect)),
  }))
}

function describeEffect(direction: Direction, value: ChangeClass): string {
  if (value === 'cosmetic') return 'an annotation'
  if (direction === 'input') return value === 'breaking' ? 'callers may be refused' : 'accepts more'
  return value === 'breaking' ? 'readers may get what they did not expect' : 'promises more'
}

function diffErrors(name: string, was: ContractAction, is: ContractAction, shared: Consumer[]): ContractChange[] {
  const changes: ContractChange[] = []
  for (const code of [...new Set([...Object.keys(was.errors), ...Object.keys(is.errors)])].sort()) {
    const [before, after] = [was.errors[code], is.errors[code]]
    const where = `errors.${code}`
    if (!after) changes.push({ subject: name, where, what: `declared error ${code} removed`, consumers: every(shared, 'breaking') })
    else if (!before) {
      const note = shared.includes('client') ? `the typed client's error union gains ${code}: an exhaustive switch on error.code needs its case` : undefined
      changes.push({ subject: name, where, what: `new declared error ${code} (HTTP ${after.status})`, consumers: every(shared, 'additive'), ...(note ? { note } : {}) })
    } else {
      if (before.status !== after.status) {
        const consumers = { ...every(shared, 'cosmetic'), ...every(shared.filter((c) => c === 'rest'), 'breaking') }
        changes.push({ subject: name, where: `${where}.status`, what: `status ${before.status} → ${after.status}`, consumers })
      }
      if (before.message !== after.message) changes.push({ subject: name, where: `${where}.message`, what: 'message changed', consumers: every(shared, 'cosmetic') })
      changes.push(...schemaChanges(name, `${where}.data`, 'output', before.data, after.data, shared))
    }
  }
  return changes
}
