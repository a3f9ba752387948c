#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { ControlPlaneClient } from './client.js'
import type { Command } from './command.js'
import { agentsCommand } from './commands/agents.js'
import { demoteCommand } from './commands/demote.js'
import { eventsCommand } from './commands/events.js'
import { hotkeysCommand } from './commands/hotkeys.js'
import { nodesCommand } from './commands/nodes.js'
import { promoteCommand } from './commands/promote.js'
import { statsCommand } from './commands/stats.js'
import { topCommand } from './commands/top.js'
import { CliError, ExitCode } from './exit-codes.js'
import { commandHelp, mainHelp } from './help.js'
import { stopSignal } from './stop-signal.js'

const COMMANDS: Command[] = [
  hotkeysCommand,
  topCommand,
  promoteCommand,
  demoteCommand,
  statsCommand,
  agentsCommand,
  nodesCommand,
  eventsCommand,
]

const GLOBAL_OPTIONS = {
  url: { type: 'string', short: 'u' },
  token: { type: 'string', short: 't' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

/** Runs `heatsink <args>`; resolves to the exit code. */
export async function main(args: string[]): Promise<number> {
  const [name, ...rest] = args
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${mainHelp(COMMANDS)}\n`)
    return name === undefined ? ExitCode.usage : ExitCode.ok
  }
  const command = COMMANDS.find((c) => c.name === name)
  if (command === undefined) {
    process.stderr.write(`heatsink: unknown command '${name}'\n\n${mainHelp(COMMANDS)}\n`)
    return ExitCode.usage
  }
  const ac = new AbortController()
  const onSignal = () => ac.abort()
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  try {
    const { values, positionals } = parse(command, rest)
    if (values.help === true) {
      process.stdout.write(`${commandHelp(command)}\n`)
      return ExitCode.ok
    }
    if (positionals.length !== command.positionals) {
      throw new CliError(
        `'${command.name}' takes ${command.positionals === 0 ? 'no argument' : 'one key'}; usage: heatsink ${command.usage}`,
        ExitCode.usage,
      )
    }
    const url = stringOption(values.url) ?? process.env.HEATSINK_URL ?? 'http://127.0.0.1:8080'
    const token = stringOption(values.token) ?? (process.env.HEATSINK_API_TOKEN || undefined)
    const client = new ControlPlaneClient(url, token)
    const out = (text: string) => void process.stdout.write(`${text}\n`)
    await command.run(
      { client, json: values.json === true, out, stop: stopSignal(ac.signal) },
      values,
      positionals,
    )
    return ExitCode.ok
  } catch (error) {
    if (error instanceof CliError) {
      process.stderr.write(`heatsink ${command.name}: ${error.message}\n`)
      return error.exitCode
    }
    process.stderr.write(`heatsink ${command.name}: ${(error as Error).stack ?? String(error)}\n`)
    return ExitCode.failed
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}

function parse(command: Command, args: string[]) {
  try {
    return parseArgs({
      args,
      options: { ...GLOBAL_OPTIONS, ...command.options },
      allowPositionals: true,
      strict: true,
    })
  } catch (error) {
    // parseArgs' own messages name the option: "Unknown option '--ttll'".
    throw new CliError(`${(error as Error).message}; see heatsink ${command.name} --help`, ExitCode.usage)
  }
}

function stringOption(value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined
}

process.exitCode = await main(process.argv.slice(2))
