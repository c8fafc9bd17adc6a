/**
 * The `fastify-actions` command: a table of commands, each loaded with `import()` only when it runs,
 * so `--help` and `--version` import nothing but this file and node:util.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { CliError, usageError } from './errors.js'
import { ownPackage, type Values } from './package.js'

type Options = NonNullable<ParseArgsConfig['options']>

/** What a command module exports. */
export interface CommandModule {
  run: (values: Values, positionals: string[]) => Promise<void>
}

interface Command {
  summary: string
  help: string
  options: Options
  /** It reads arguments after its name (`new <dir>`, `gen service <name>`); every other command refuses one. */
  positionals?: true
  load: () => Promise<CommandModule>
}

const configOption: Options = { config: { type: 'string' } }

export const commands: Record<string, Command> = {
  new: {
    summary: 'Write a new project into <dir> and install it',
    help: `Usage: fastify-actions new <dir> [--from <spec>] [--auth] [--no-install]

Writes a new project (a tasks service on PGlite, tests, Dockerfile, compose.yaml) into <dir>,
which must not exist or be empty, then runs npm install in it.

Options:
  --from <spec>   the npm spec written for fastify-actions in package.json: a version range,
                  a tarball or a folder (default: ^<this CLI's version>)
  --auth          add JWT signup and login actions and a protected action (the account service)
  --no-install    write the files only
  -h, --help      show this help`,
    options: { from: { type: 'string' }, auth: { type: 'boolean' }, 'no-install': { type: 'boolean' } },
    positionals: true,
    load: () => import('./new.js'),
  },
  gen: {
    summary: 'Generate a service or an action in the current project',
    help: `Usage: fastify-actions gen service <name>
       fastify-actions gen action <service> <name>

Run in a project's root. Writes src/services/<name>/ (a service with one action) or
src/services/<service>/<name>.ts (an action), registers it in src/services/index.ts or the
service's action list, and refuses to overwrite anything. Names are kebab-case or camelCase
(user-profiles becomes userProfiles).

Options:
  -h, --help      show this help`,
    options: {},
    positionals: true,
    load: () => import('./gen.js'),
  },
  list: {
    summary: "Print a table of the project's services and actions",
    help: `Usage: fastify-actions list [--config <file>]

Prints the project's services and actions: protected, upload, output schema, route.
The config is loaded through the project's own tsx; no server is started.

Options:
  --config <file>  the module whose default export is the server config (default src/config.ts)
  -h, --help       show this help`,
    options: configOption,
    load: () => import('./list.js'),
  },
  openapi: {
    summary: "Print or write the project's OpenAPI 3.1 document",
    help: `Usage: fastify-actions openapi [--out <file>] [--config <file>]

Builds the project's OpenAPI 3.1 document without listening on a port and prints it, or
writes it to <file>.

Options:
  --out <file>     write the document to <file> instead of stdout
  --config <file>  the module whose default export is the server config (default src/config.ts)
  -h, --help       show this help`,
    options: { ...configOption, out: { type: 'string' } },
    load: () => import('./openapi.js'),
  },
  contract: {
    summary: "Write a snapshot of the project's contract (contract.json)",
    help: `Usage: fastify-actions contract [--out <file>] [--config <file>]

Writes the project's contract, a stable, key-sorted JSON snapshot to commit: every action's
input, output, event and declared-error schemas, route, auth, visibility and deprecation, the
OpenAPI document and the MCP tool list. Built without listening on a port.

Options:
  --out <file>     where to write it (default contract.json in the project's root; - for stdout)
  --config <file>  the module whose default export is the server config (default src/config.ts)
  -h, --help       show this help`,
    options: { ...configOption, out: { type: 'string' } },
    load: () => import('./contract.js'),
  },
  diff: {
    summary: 'Compare the contract with a snapshot: what breaks the client, REST callers, agents',
    help: `Usage: fastify-actions diff [--against <file | git ref>] [--json] [--allow-breaking] [--config <file>]

Compares the project's contract now with a snapshot (contract.json by default) and prints each
change with its class for each consumer (the typed client, REST callers, agents over MCP):
breaking, additive, cosmetic, or expected (an action removed after its sunset).

Options:
  --against <x>     a snapshot file, or a git ref whose contract.json to compare with (HEAD, main, v1.2.0)
  --json            print the report as JSON (for CI)
  --allow-breaking  exit 0 even when something breaks
  --config <file>   the module whose default export is the server config (default src/config.ts)
  -h, --help        show this help

Exit codes: 0 nothing breaks, 1 something breaks, 2 usage error or the contract cannot be read.`,
    options: { ...configOption, against: { type: 'string' }, json: { type: 'boolean' }, 'allow-breaking': { type: 'boolean' } },
    load: () => import('./diff.js'),
  },
  mcp: {
    summary: "Serve the project's actions as MCP tools over stdio",
    help: `Usage: fastify-actions mcp [--config <file>]

Serves the project's actions as MCP tools over stdio (for a desktop agent or an IDE): the same
tools, names and pipeline as the HTTP MCP endpoint. stdout carries the protocol only; every
other line goes to stderr. Protected actions use the token in FASTIFY_ACTIONS_TOKEN.

Options:
  --config <file>  the module whose default export is the server config (default src/config.ts)
  -h, --help       show this help

Environment:
  FASTIFY_ACTIONS_TOKEN  a JWT sent as the Authorization bearer of every tool call`,
    options: configOption,
    load: () => import('./mcp.js'),
  },
}

function mainHelp(): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length))
  const lines = Object.entries(commands).map(([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`)
  return `Usage: fastify-actions <command> [options]

Commands:
${lines.join('\n')}

Options:
  -h, --help     show help (also after a command: fastify-actions new --help)
  -v, --version  show the version

Exit codes: 0 done, 1 bad input or failure, 2 usage error.`
}

/** Runs the command line (without `node` and the script); resolves when the command is done. */
export async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    process.stdout.write(mainHelp() + '\n')
    return
  }
  if (name === '-v' || name === '--version') {
    process.stdout.write(ownPackage().version + '\n')
    return
  }
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined
  if (!command) throw usageError(`unknown command ${JSON.stringify(name)}`)
  let parsed: { values: Values; positionals: string[] }
  try {
    parsed = parseArgs({ args: rest, options: { ...command.options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true }) as typeof parsed
  } catch (error) {
    // parseArgs' own text names the option: "Unknown option '--x'".
    throw usageError(error instanceof Error ? error.message.split('\n')[0].replace(/\. To specify a positional.*$/, '') : String(error))
  }
  if (parsed.values.help) {
    process.stdout.write(command.help + '\n')
    return
  }
  if (!command.positionals && parsed.positionals.length > 0) throw usageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`)
  const module = await command.load()
  await module.run(parsed.values, parsed.positionals)
}

/** The exit code of an error, printing its one line: a CliError's own, else 1. */
export function reportError(error: unknown): number {
  const message = error instanceof Error ? error.message : String(error)
  process.stderr.write(`fastify-actions: ${message.split('\n')[0]}\n`)
  return error instanceof CliError ? error.exitCode : 1
}
