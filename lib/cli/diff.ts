/**
 * `fastify-actions diff [--against <file | git ref>]`: the project's contract now against a snapshot,
 * each change with its class per consumer. Exit 0 when nothing breaks, 1 when something does (unless
 * `--allow-breaking`), 2 when the command cannot run (its line, the snapshot, the project).
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { buildContract, CONTRACT_FILE, CONTRACT_VERSION, type Contract } from './contract.js'
import { classOf, CONSUMERS, diffContracts, type Consumer, type ContractChange } from './contract-diff.js'
import { CliError } from './errors.js'
import { formatTable } from './list.js'
import type { Values } from './package.js'
import { openProject } from './project.js'
import type { ChangeClass } from './schema-changes.js'

const CONSUMER_NAMES: Record<Consumer, string> = { client: 'client', rest: 'REST', agents: 'agents' }
const CLASSES: readonly ChangeClass[] = ['breaking', 'expected', 'additive', 'cosmetic']

/** The snapshot named by `--against`: a file, else `<ref>:contract.json` from git; the project's contract.json by default. */
export function readSnapshot(root: string, against: string | undefined): { source: string; text: string } {
  const file = join(root, CONTRACT_FILE)
  if (against === undefined) {
    if (!existsSync(file)) throw new CliError(`no snapshot at ${CONTRACT_FILE}: run fastify-actions contract and commit it`, 2)
    return { source: CONTRACT_FILE, text: readFileSync(file, 'utf8') }
  }
  const path = resolve(against)
  if (existsSync(path) && statSync(path).isFile()) return { source: against, text: readFileSync(path, 'utf8') }
  let top: string
  try {
    top = execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
  } catch {
    throw new CliError(`--against ${against}: no such file, and the project is not in a git repository`, 2)
  }
  const inRepo = relative(top, file).split('\\').join('/')
  try {
    const text = execFileSync('git', ['show', `${against}:${inRepo}`], { cwd: top, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024 })
    return { source: `${against}:${inRepo}`, text }
  } catch (error) {
    const reason = String((error as { stderr?: string }).stderr ?? '').trim().split('\n')[0]
    throw new CliError(`--against ${against}: no such file, and git has no ${inRepo} at that ref${reason ? ` (${reason})` : ''}`, 2)
  }
}

/** Parses a snapshot, refusing one this version cannot read. */
export function parseSnapshot(source: string, text: string): Contract {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new CliError(`${source} is not JSON: write it again with fastify-actions contract`, 2)
  }
  const contract = value as Partial<Contract> | null
  if (!contract || typeof contract !== 'object' || contract.contract !== CONTRACT_VERSION || !contract.actions || typeof contract.actions !== 'object') {
    throw new CliError(`${source} is not a fastify-actions contract (version ${CONTRACT_VERSION}): write it again with fastify-actions contract`, 2)
  }
  return contract as Contract
}

/** `REST, agents` when every consumer has the change's class; `client: additive, REST: breaking` otherwise. */
function consumersText(change: ContractChange): string {
  const present = CONSUMERS.filter((consumer) => change.consumers[consumer] !== undefined)
  const value = classOf(change)
  if (present.every((consumer) => change.consumers[consumer] === value)) return present.map((consumer) => CONSUMER_NAMES[consumer]).join(', ')
  return present.map((consumer) => `${CONSUMER_NAMES[consumer]}: ${change.consumers[consumer]}`).join(', ')
}

export function countClasses(changes: ContractChange[]): Record<ChangeClass, number> {
  const counts = { breaking: 0, expected: 0, additive: 0, cosmetic: 0 }
  for (const change of changes) counts[classOf(change)]++
  return counts
}

/** The report a person reads: one row per change, worst first, then the counts. */
export function formatReport(source: string, changes: ContractChange[]): string {
  if (changes.length === 0) return `No changes against ${source}.`
  const sorted = [...changes].sort((a, b) => CLASSES.indexOf(classOf(a)) - CLASSES.indexOf(classOf(b)))
  const rows = sorted.map((change) => [classOf(change).toUpperCase(), change.subject, change.where, consumersText(change), change.what + (change.note ? ` (client: ${change.note})` : '')])
  const counts = countClasses(changes)
  const summary = CLASSES.map((name) => `${counts[name]} ${name}`).join(', ')
  return `Changes against ${source}:\n\n${formatTable(['CLASS', 'ACTION', 'WHERE', 'CONSUMERS', 'CHANGE'], rows)}\n\n${summary}`
}

export async function run(values: Values): Promise<void> {
  const project = openProject(values)
  const { source, text } = readSnapshot(project.root, values.against as string | undefined)
  const before = parseSnapshot(source, text)
  let after: Contract
  try {
    after = await buildContract(project)
  } catch (error) {
    // 1 means "something breaks": a project that cannot be built is another answer.
    throw new CliError(error instanceof Error ? error.message : String(error), 2)
  }
  const changes = diffContracts(before, after)
  const counts = countClasses(changes)
  if (values.json) {
    const report = { against: source, breaking: counts.breaking > 0, counts, changes: changes.map((change) => ({ class: classOf(change), ...change })) }
    process.stdout.write(JSON.stringify(report, null, 2) + '\n')
  } else process.stdout.write(formatReport(source, changes) + '\n')
  if (counts.breaking > 0 && !values['allow-breaking']) {
    throw new CliError(`${counts.breaking} breaking change${counts.breaking === 1 ? '' : 's'} against ${source} (--allow-breaking accepts them)`, 1)
  }
}
