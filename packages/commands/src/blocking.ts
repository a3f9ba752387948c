import { isToken } from './args.js'
import type { CommandSpec } from './command-spec.js'

// XREAD [COUNT n] [BLOCK ms] STREAMS k1 k2 ... id1 id2 ...
// XREADGROUP GROUP g consumer [COUNT n] [BLOCK ms] [NOACK] STREAMS k1 k2 ... id1 id2 ...
// The only commands that block for some calls and not others: only when BLOCK comes before STREAMS.

/** Where XREAD's options start in args. */
export const XREAD_OPTIONS_FROM = 0
/** Where XREADGROUP's options start: after GROUP, the group and the consumer, so that a consumer called
 * "streams" or "block" is not read as the keyword. */
export const XREADGROUP_OPTIONS_FROM = 3

// The commands that block only with a BLOCK option, each with where its options start.
const BLOCK_OPTION_COMMANDS: ReadonlyMap<string, number> = new Map([
  ['xread', XREAD_OPTIONS_FROM],
  ['xreadgroup', XREADGROUP_OPTIONS_FROM],
])

/**
 * The index of XREAD's or XREADGROUP's STREAMS keyword at or after `from`, or -1. Like Redis' key
 * specification for these commands, the first STREAMS wins and option values are not skipped: no valid COUNT
 * or BLOCK value reads "STREAMS".
 */
export function streamsKeyword(args: readonly unknown[], from: number): number {
  for (let i = from; i < args.length; i += 1) if (isToken(args[i], 'STREAMS')) return i
  return -1
}

// Redis reads options only before STREAMS; after it come stream names, and a stream may be called "BLOCK".
function hasBlockOption(args: readonly unknown[], from: number): boolean {
  const keyword = streamsKeyword(args, from)
  const end = keyword === -1 ? args.length : keyword
  for (let i = from; i < end; i += 1) if (isToken(args[i], 'BLOCK')) return true
  return false
}

/**
 * Whether this call may hold its connection until data arrives or a timeout passes: every call of a blocking
 * command (BLPOP, BLMOVE, BZMPOP, WAIT...), and XREAD or XREADGROUP only with a BLOCK option. A proxy gives
 * such a call a connection of its own instead of pipelining other clients' calls behind it.
 */
export function isBlocking(spec: CommandSpec, args: readonly unknown[]): boolean {
  if (spec.blocking) return true
  const optionsFrom = BLOCK_OPTION_COMMANDS.get(spec.name)
  return optionsFrom !== undefined && hasBlockOption(args, optionsFrom)
}

// Every command that runs a Lua script or function.
const SCRIPT_COMMANDS: ReadonlySet<string> = new Set([
  'eval',
  'evalsha',
  'eval_ro',
  'evalsha_ro',
  'fcall',
  'fcall_ro',
])

/**
 * Whether `command` (lowercase) runs a script. A script holds its connection for as long as it runs, and once past
 * lua-time-limit Redis answers other connections BUSY and takes SCRIPT KILL or FUNCTION KILL only from another
 * connection: a proxy gives the caller a connection of its own, so that neither waits behind it.
 */
export function runsScript(command: string): boolean {
  return SCRIPT_COMMANDS.has(command)
}
