/** What the process's exit code says went wrong, so scripts can tell a typo from an outage. */
export const ExitCode = {
  ok: 0,
  /** Anything not listed below. */
  failed: 1,
  /** Bad command line: unknown subcommand or option, missing or invalid argument. */
  usage: 2,
  /** The aggregator could not be reached (connection refused, DNS, timeout). */
  unreachable: 3,
  /** The API refused the token (401): set HEATSINK_API_TOKEN or --token. */
  unauthorized: 4,
  /** The key is not in the registry or has never been seen (404). */
  notFound: 5,
  /** The API rejected the request's content (400). */
  rejected: 6,
  /** The aggregator answered but its registry or Redis is unavailable (503). */
  unavailable: 7,
} as const

/** An error the CLI reports as one line and an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message)
    this.name = 'CliError'
  }
}

/** The exit code for an HTTP status the API answered with. */
export function exitCodeForStatus(status: number): number {
  if (status === 400) return ExitCode.rejected
  if (status === 401) return ExitCode.unauthorized
  if (status === 404) return ExitCode.notFound
  if (status === 503) return ExitCode.unavailable
  return ExitCode.failed
}
