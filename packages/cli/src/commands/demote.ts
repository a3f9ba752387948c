import type { Command } from '../command.js'

/** `heatsink demote KEY`: take a key out of the registry. */
export const demoteCommand: Command = {
  name: 'demote',
  summary: 'demote a key (agents stop mitigating it)',
  usage: 'demote KEY',
  options: {},
  optionHelp: [],
  positionals: 1,
  run: async ({ client, json, out }, _values, [key]) => {
    await client.demote(key as string)
    out(json ? JSON.stringify({ key, demoted: true }) : `demoted ${key}`)
  },
}
