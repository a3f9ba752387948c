import { createRequire } from 'node:module'
import { list } from '@ioredis/commands'
import type { CommandData } from './command-spec.js'

// The package's index answers one flag question at a time; the arity, flags and key layout come from its
// JSON, read with require() because Node 20 warns that `import ... with { type: 'json' }` is experimental.
const require = createRequire(import.meta.url)
const json = require('@ioredis/commands/built/commands.json') as Readonly<Record<string, CommandData>>

/**
 * Commands @ioredis/commands 1.10.0 does not know, with their key layout and the flags the table reads. It
 * holds every command of Redis 7.0 (checked against `COMMAND LIST` of 7.0.15), so only later ones are here.
 */
const EXTRA_COMMANDS: Readonly<Record<string, CommandData>> = {
  // Redis 7.2: holds the connection, like WAIT, until earlier writes reach the AOF locally and on N replicas.
  // A proxy in front of 7.2 or later sees it and must not pipeline other calls behind it.
  waitaof: { arity: 4, flags: ['noscript', 'blocking'], keyStart: 0, keyStop: 0, step: 0 },
}

/** Every command the table knows, by lowercase name, with its key layout and flags. */
export const COMMAND_DATA: ReadonlyMap<string, CommandData> = loadCommandData()

/** Whether the command names keys at positions COMMAND INFO's first/last/step layout describes. */
export function hasFixedKeys(data: CommandData): boolean {
  return data.step > 0 && data.keyStart > 0
}

function loadCommandData(): Map<string, CommandData> {
  const data = new Map<string, CommandData>()
  for (const name of list) {
    const entry = json[name]
    // `list` is Object.keys of the same JSON; a name without an entry would mean a broken package.
    if (entry === undefined) throw new Error(`@ioredis/commands lists ${name} but has no data for it`)
    data.set(name, entry)
  }
  for (const [name, entry] of Object.entries(EXTRA_COMMANDS)) {
    if (!data.has(name)) data.set(name, entry)
  }
  return data
}
