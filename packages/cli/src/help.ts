import type { Command } from './command.js'

const GLOBAL_HELP = [
  '-u, --url URL      the aggregator (default $HEATSINK_URL, else http://127.0.0.1:8080)',
  '-t, --token T      API token for promote and demote (default $HEATSINK_API_TOKEN)',
  '    --json         print JSON for scripts',
  '-h, --help         this help',
]

const EXIT_CODES = [
  'Exit codes: 0 ok, 1 unexpected failure, 2 bad command line, 3 aggregator unreachable,',
  '4 token missing or refused, 5 key not found, 6 request rejected, 7 registry or Redis unavailable.',
]

/** `heatsink --help`. */
export function mainHelp(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length))
  return [
    'heatsink: watch and steer the Heatsink control plane',
    '',
    'Usage: heatsink <command> [options]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Options of every command:',
    ...GLOBAL_HELP.map((line) => `  ${line}`),
    '',
    ...EXIT_CODES,
    'Run heatsink <command> --help for its own options.',
  ].join('\n')
}

/** `heatsink <command> --help`. */
export function commandHelp(command: Command): string {
  return [
    `Usage: heatsink ${command.usage} [--url URL] [--token T] [--json]`,
    '',
    `${command.summary[0]?.toUpperCase()}${command.summary.slice(1)}.`,
    '',
    ...(command.optionHelp.length === 0 ? [] : ['Options:', ...command.optionHelp.map((l) => `  ${l}`), '']),
    'Options of every command:',
    ...GLOBAL_HELP.map((line) => `  ${line}`),
    '',
    ...EXIT_CODES,
  ].join('\n')
}
