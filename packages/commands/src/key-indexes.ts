import { COMMAND_DATA, hasFixedKeys } from './command-data.js'
import type { CommandData, CommandSpec } from './command-spec.js'
import { KEY_FINDERS, scanMigrate } from './key-finders.js'

/**
 * Indexes into args of every key the command touches: EVAL/EVALSHA/EVAL_RO/FCALL's numkeys, XREAD and
 * XREADGROUP's STREAMS, SORT's STORE destination (but not its BY and GET patterns), MIGRATE's KEYS,
 * ZUNIONSTORE's destination and numkeys, GEORADIUS' STORE and STOREDIST, MSET's pairs, OBJECT and MEMORY
 * USAGE after their subcommand. For a well-formed call, the keys Redis 7.0's COMMAND GETKEYS names, in its
 * order; shard channels (SPUBLISH) are not keys.
 */
export function keyIndexes(spec: CommandSpec, args: readonly unknown[]): number[] {
  if (spec.singleKey >= 0) return spec.singleKey < args.length ? [spec.singleKey] : []
  const finder = KEY_FINDERS.get(spec.name)
  if (finder !== undefined) return finder(args)
  const data = COMMAND_DATA.get(spec.name)
  return data === undefined ? [] : fixedKeyIndexes(data, args.length)
}

// The legacy layout: from the first key to the last (negative counts back from the end) by step. Positions
// count the command name as 0, args do not, hence the -1.
function fixedKeyIndexes(data: CommandData, length: number): number[] {
  if (!hasFixedKeys(data)) return []
  const first = data.keyStart - 1
  const last = Math.min(data.keyStop >= 0 ? data.keyStop - 1 : length + data.keyStop, length - 1)
  const keys: number[] = []
  for (let i = first; i <= last; i += data.step) keys.push(i)
  return keys
}

/** Picks the written keys out of all keys of one call. */
type WrittenKeys = (keys: number[], args: readonly unknown[]) => number[]

// The first key is the destination, the rest are sources that are only read.
const destinationOnly: WrittenKeys = (keys) => keys.slice(0, 1)
// The first key is only read; the rest (a destination, if the call names one) are written.
const allButFirst: WrittenKeys = (keys) => keys.slice(1)

/** Write commands that leave some of their keys alone; any other write command writes every key it names. */
const PARTIAL_WRITES: ReadonlyMap<string, WrittenKeys> = new Map<string, WrittenKeys>([
  ['sinterstore', destinationOnly],
  ['sunionstore', destinationOnly],
  ['sdiffstore', destinationOnly],
  ['zunionstore', destinationOnly],
  ['zinterstore', destinationOnly],
  ['zdiffstore', destinationOnly],
  ['zrangestore', destinationOnly],
  ['geosearchstore', destinationOnly],
  ['pfmerge', destinationOnly],
  // BITOP op dst src ...: the keys start after the operation, the destination first.
  ['bitop', destinationOnly],
  // COPY src dst: the source is only read.
  ['copy', allButFirst],
  // SORT and GEORADIUS write only their STORE (or STOREDIST) destination; without one they only read.
  ['sort', allButFirst],
  ['georadius', allButFirst],
  ['georadiusbymember', allButFirst],
  // MIGRATE deletes its keys here, unless COPY keeps them.
  ['migrate', (keys, args) => (scanMigrate(args).copy ? [] : keys)],
])

/**
 * For commands with several keys where only some are written (SORT ... STORE dst, COPY's destination,
 * BITOP's destination, SINTERSTORE/ZUNIONSTORE/GEOSEARCHSTORE's destination, GEORADIUS STORE): which key
 * indexes are written. LMOVE, RPOPLPUSH, SMOVE and RENAME write both keys. A plain write command writes
 * all its keys; a read command none.
 */
export function writtenKeyIndexes(spec: CommandSpec, args: readonly unknown[]): number[] {
  if (spec.access !== 'write') return []
  const keys = keyIndexes(spec, args)
  const partial = PARTIAL_WRITES.get(spec.name)
  return partial === undefined ? keys : partial(keys, args)
}
