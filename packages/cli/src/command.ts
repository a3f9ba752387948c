import type { ParseArgsConfig } from 'node:util'
import type { ControlPlaneClient } from './client.js'
import type { StopSignal } from './stop-signal.js'

/** What every subcommand gets: the API client, whether to print JSON, and where to write. */
export interface CommandContext {
  client: ControlPlaneClient
  json: boolean
  out: (text: string) => void
  /** Ctrl-C (or SIGTERM) asking a long-running command to stop. */
  stop: StopSignal
}

/** Values parseArgs produced for a subcommand's own options. */
export type OptionValues = Record<string, string | boolean | undefined>

/** One `heatsink <name>` subcommand. */
export interface Command {
  name: string
  /** One line for the command list. */
  summary: string
  /** The usage line after `heatsink `, e.g. `promote KEY --mitigation M [--ttl S]`. */
  usage: string
  /** Its own options (the global ones are added by main). */
  options: NonNullable<ParseArgsConfig['options']>
  /** Lines describing the options, for --help. */
  optionHelp: string[]
  /** How many positional arguments it takes. */
  positionals: number
  run(context: CommandContext, values: OptionValues, positionals: string[]): Promise<void>
}
