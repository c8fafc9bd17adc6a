/** A refusal or failure of the CLI: one line on stderr, then the exit code (1 bad input or failure, 2 usage). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message)
    this.name = 'CliError'
  }
}

/** A command line the CLI cannot read (unknown command or option, a missing argument): exit code 2. */
export function usageError(message: string): CliError {
  return new CliError(`${message} (see --help)`, 2)
}
