import { countArg, isAnyToken, isEmptyArg, isToken, runOfIndexes } from './args.js'
import { streamsKeyword, XREAD_OPTIONS_FROM, XREADGROUP_OPTIONS_FROM } from './blocking.js'

/** Finds the key indexes of one call of a command whose keys move with its arguments. */
export type KeyFinder = (args: readonly unknown[]) => number[]

/** A numkeys argument at args[at] and that many keys right after it (EVAL script numkeys k1 k2 ...). */
function countedAt(at: number): KeyFinder {
  return (args) => runOfIndexes(at + 1, countArg(args[at]), args.length)
}

// ZUNIONSTORE dst numkeys k1 k2 ...: the destination, then the counted sources.
const countedAfterDestination = countedAt(1)
const destinationThenCounted: KeyFinder = (args) =>
  args.length === 0 ? [] : [0, ...countedAfterDestination(args)]

// MSETEX numkeys k1 v1 (Redis 8.4) k2 v2 ... [EX s]: numkeys key-value pairs.
const countedPairs: KeyFinder = (args) => {
  const keys: number[] = []
  const count = countArg(args[0])
  for (let i = 0; i < count && 1 + 2 * i < args.length; i += 1) keys.push(1 + 2 * i)
  return keys
}

/**
 * XREAD and XREADGROUP, STREAMS looked for from args[from]: the first half of the arguments after it (the
 * second half are the streams' ids). An odd remainder leaves the middle argument out, as COMMAND GETKEYS
 * does.
 */
function streamKeys(from: number): KeyFinder {
  return (args) => {
    const keyword = streamsKeyword(args, from)
    if (keyword === -1) return []
    return runOfIndexes(keyword + 1, Math.floor((args.length - keyword - 1) / 2), args.length)
  }
}

// SORT k [BY pattern] [LIMIT o c] [GET pattern ...] [ASC|DESC] [ALPHA] [STORE dst]. BY and GET name patterns
// of other keys, not keys: they are left out, as COMMAND GETKEYS leaves them out. The last STORE wins, as it
// does when SORT runs.
const sortKeys: KeyFinder = (args) => {
  if (args.length === 0) return []
  let store = -1
  for (let i = 1; i < args.length; i += 1) {
    const arg = args[i]
    if (isToken(arg, 'LIMIT')) i += 2
    else if (isToken(arg, 'BY') || isToken(arg, 'GET')) i += 1
    else if (isToken(arg, 'STORE') && i + 1 < args.length) {
      store = i + 1
      i += 1
    }
  }
  return store === -1 ? [0] : [0, store]
}

// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password] [AUTH2 username password]
//   [KEYS key [key ...]]: the options start at args[5].
const MIGRATE_OPTIONS_FROM = 5

/** What the options of one MIGRATE call say about its keys. */
export interface MigrateOptions {
  /** Index of the first key after KEYS, or -1 without KEYS (or with KEYS last, naming none). */
  readonly firstKey: number
  /** COPY: the keys stay on this server, so MIGRATE writes nothing here. */
  readonly copy: boolean
}

/**
 * Reads the options of a MIGRATE call. AUTH's and AUTH2's values are skipped, so a password that reads
 * "KEYS" or "COPY" is not taken for the keyword.
 */
export function scanMigrate(args: readonly unknown[]): MigrateOptions {
  let copy = false
  for (let i = MIGRATE_OPTIONS_FROM; i < args.length; i += 1) {
    const arg = args[i]
    if (isToken(arg, 'COPY')) copy = true
    else if (isToken(arg, 'AUTH')) i += 1
    else if (isToken(arg, 'AUTH2')) i += 2
    // Everything after KEYS is a key, even one that reads "COPY".
    else if (isToken(arg, 'KEYS')) return { firstKey: i + 1 < args.length ? i + 1 : -1, copy }
  }
  return { firstKey: -1, copy }
}

// MIGRATE's one key, or when it is "" every argument after KEYS.
const migrateKeys: KeyFinder = (args) => {
  if (args.length < 3) return []
  if (!isEmptyArg(args[2])) return [2]
  const { firstKey } = scanMigrate(args)
  return firstKey === -1 ? [] : runOfIndexes(firstKey, args.length, args.length)
}

const GEO_STORE_OPTIONS = ['STORE', 'STOREDIST']

/**
 * GEORADIUS key lon lat radius unit ... and GEORADIUSBYMEMBER key member radius unit ..., whose options start
 * at args[optionsFrom]: the key, and the destination of STORE and of STOREDIST. Redis stores into the last of
 * them only, but COMMAND GETKEYS names both, so both count.
 */
function geoStoreKeys(optionsFrom: number): KeyFinder {
  return (args) => {
    if (args.length === 0) return []
    const keys = [0]
    for (let i = optionsFrom; i < args.length - 1; i += 1) {
      if (isAnyToken(args[i], GEO_STORE_OPTIONS)) {
        keys.push(i + 1)
        i += 1
      }
    }
    return keys
  }
}

/** A container command (OBJECT ENCODING key) whose key follows the subcommand, for the keyed subcommands. */
function subcommandKey(subcommands: readonly string[]): KeyFinder {
  return (args) => (args.length > 1 && isAnyToken(args[0], subcommands) ? [1] : [])
}

// SPUBLISH, SSUBSCRIBE and SUNSUBSCRIBE give their shard channels key positions, so a Cluster routes them by
// slot; but a channel is not a key, and Redis' own COMMAND GETKEYS answers that they have none.
const noKeys: KeyFinder = () => []

/** Every command whose keys the fixed first/last/step layout cannot describe, and how to find them. */
export const KEY_FINDERS: ReadonlyMap<string, KeyFinder> = new Map<string, KeyFinder>([
  ['eval', countedAt(1)],
  ['eval_ro', countedAt(1)],
  ['evalsha', countedAt(1)],
  ['evalsha_ro', countedAt(1)],
  ['fcall', countedAt(1)],
  ['fcall_ro', countedAt(1)],
  // BLMPOP timeout numkeys k ...: the count follows the timeout.
  ['blmpop', countedAt(1)],
  ['bzmpop', countedAt(1)],
  ['lmpop', countedAt(0)],
  ['zmpop', countedAt(0)],
  ['sintercard', countedAt(0)],
  ['zintercard', countedAt(0)],
  ['zunion', countedAt(0)],
  ['zinter', countedAt(0)],
  ['zdiff', countedAt(0)],
  ['zunionstore', destinationThenCounted],
  ['zinterstore', destinationThenCounted],
  ['zdiffstore', destinationThenCounted],
  ['msetex', countedPairs],
  ['xread', streamKeys(XREAD_OPTIONS_FROM)],
  ['xreadgroup', streamKeys(XREADGROUP_OPTIONS_FROM)],
  ['sort', sortKeys],
  // SORT_RO has no STORE; its BY and GET patterns are not keys either.
  ['sort_ro', (args) => (args.length === 0 ? [] : [0])],
  ['migrate', migrateKeys],
  ['georadius', geoStoreKeys(5)],
  ['georadiusbymember', geoStoreKeys(4)],
  ['object', subcommandKey(['ENCODING', 'FREQ', 'IDLETIME', 'REFCOUNT'])],
  ['memory', subcommandKey(['USAGE'])],
  ['xinfo', subcommandKey(['STREAM', 'GROUPS', 'CONSUMERS'])],
  ['xgroup', subcommandKey(['CREATE', 'SETID', 'DESTROY', 'CREATECONSUMER', 'DELCONSUMER'])],
  ['spublish', noKeys],
  ['ssubscribe', noKeys],
  ['sunsubscribe', noKeys],
])
