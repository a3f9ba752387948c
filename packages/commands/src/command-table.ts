import { CACHEABLE_REPLIES } from './cacheable.js'
import { COMMAND_DATA, hasFixedKeys } from './command-data.js'
import { COMMAND_FORMS, CommandForm } from './command-forms.js'
import type { CommandAccess, CommandData, CommandSpec } from './command-spec.js'
import { KEY_FINDERS } from './key-finders.js'
import { OVERRIDES } from './overrides.js'

// Not flags in Redis: these commands change what later commands on the same connection mean.
const TRANSACTION_COMMANDS: ReadonlySet<string> = new Set(['multi', 'exec', 'discard', 'watch', 'unwatch'])

// 'readonly' alone does not make a read: KEYS, SCAN, DBSIZE and RANDOMKEY are 'readonly' but name no key.
function accessOf(data: CommandData): CommandAccess {
  if (data.flags.includes('write')) return 'write'
  const namesKeys = hasFixedKeys(data) || data.flags.includes('movablekeys')
  return data.flags.includes('readonly') && namesKeys ? 'read' : 'none'
}

// A command with a key finder has keys that move with its arguments, or (shard channels) no keys at all.
function singleKeyOf(name: string, data: CommandData): number {
  if (KEY_FINDERS.has(name) || data.flags.includes('movablekeys')) return -1
  return hasFixedKeys(data) && data.keyStop === data.keyStart ? data.keyStart - 1 : -1
}

function buildSpec(name: string, data: CommandData): CommandSpec {
  const flags = data.flags
  const reply = CACHEABLE_REPLIES.get(name)
  const derived: CommandSpec = {
    name,
    access: accessOf(data),
    blocking: flags.includes('blocking'),
    pubsub: flags.includes('pubsub'),
    admin: flags.includes('admin'),
    transaction: TRANSACTION_COMMANDS.has(name),
    noScript: flags.includes('noscript'),
    cacheable: reply !== undefined,
    reply,
    singleKey: singleKeyOf(name, data),
    form: COMMAND_FORMS.get(name) ?? CommandForm.other,
  }
  // Frozen: every caller shares the one spec per command.
  const override = Object.hasOwn(OVERRIDES, name) ? OVERRIDES[name] : undefined
  return Object.freeze({ ...derived, ...override })
}

function buildTable(): Map<string, CommandSpec> {
  const table = new Map<string, CommandSpec>()
  for (const [name, data] of COMMAND_DATA) table.set(name, buildSpec(name, data))
  return table
}

const TABLE: ReadonlyMap<string, CommandSpec> = buildTable()

/**
 * The spec for a command name, case-insensitive; undefined for a command the table does not know (callers
 * pass it through and count it as unknown). The name as given is tried first: ioredis passes lowercase names,
 * so only `call('GET')` and raw RESP pay for lowercasing.
 */
export function lookupCommand(name: string): CommandSpec | undefined {
  return TABLE.get(name) ?? TABLE.get(name.toLowerCase())
}

/** Every spec in the table, for tests and for tools that list what the data plane knows. */
export function allCommands(): IterableIterator<CommandSpec> {
  return TABLE.values()
}
