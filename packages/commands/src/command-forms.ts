import { isAnyToken, isToken } from './args.js'
import type { CommandSpec } from './command-spec.js'

/**
 * The families of command forms an agent records per tracked key and reports as a bitmask, so the control plane
 * can tell what a key holds and how it is used before it splits it. A split key answers faithfully only the forms
 * of its kind (see SPLIT_KINDS); every other form is foreign to a split. Bits are wire values: never renumber
 * them, add new ones above `other`. A bit an aggregator does not know counts as foreign.
 */
export const CommandForm = {
  /** INCR, DECR, INCRBY, DECRBY: the writes a split counter spreads over its shards. */
  counterWrite: 1,
  /** Plain GET: a split counter's sum, or one read-mostly copy. */
  get: 2,
  /** SET key value, alone or with EX or PX: what a split key's copies can take. */
  set: 4,
  /** Every other string command, and SET with NX, XX, GET, KEEPTTL, EXAT or PXAT. */
  stringOther: 8,
  /** SADD, SREM, SMEMBERS, SCARD, SISMEMBER: the set forms split over shards. */
  setSplit: 16,
  /** Every other set command (SPOP, SMOVE, SDIFF, SSCAN...). */
  setOther: 32,
  /** ZADD score-member pairs, ZREM, ZSCORE, ZCARD, ZRANGE and ZREVRANGE by rank: the sorted-set forms split. */
  zsetSplit: 64,
  /** Every other sorted-set command, and ZADD or ZRANGE with options. */
  zsetOther: 128,
  /** Anything else: key commands (DEL, EXPIRE, TYPE, RENAME...), hashes, lists, streams, scripts. */
  other: 256,
} as const

/** Every bit this table knows: a reported bit outside it counts as `other`. */
export const KNOWN_FORMS = 511

/** The operator-facing name of each form bit, in bit order. */
export const FORM_NAMES: ReadonlyArray<readonly [name: string, bit: number]> = [
  ['counter-write', CommandForm.counterWrite],
  ['get', CommandForm.get],
  ['set', CommandForm.set],
  ['string-other', CommandForm.stringOther],
  ['set-split', CommandForm.setSplit],
  ['set-other', CommandForm.setOther],
  ['zset-split', CommandForm.zsetSplit],
  ['zset-other', CommandForm.zsetOther],
  ['other', CommandForm.other],
]

/** The commands of each form family; a command in none of them is `other`. */
const FAMILIES: ReadonlyArray<readonly [form: number, names: readonly string[]]> = [
  [CommandForm.counterWrite, ['incr', 'decr', 'incrby', 'decrby']],
  [CommandForm.get, ['get']],
  // SET's options decide its form: see FORM_REFINERS.
  [CommandForm.set, ['set']],
  [
    CommandForm.stringOther,
    [
      'append',
      'getrange',
      'substr',
      'setrange',
      'strlen',
      'incrbyfloat',
      'getset',
      'getdel',
      'getex',
      'setnx',
      'setex',
      'psetex',
      'mget',
      'mset',
      'msetnx',
      'lcs',
      'getbit',
      'setbit',
      'bitcount',
      'bitpos',
      'bitfield',
      'bitfield_ro',
      'bitop',
    ],
  ],
  [CommandForm.setSplit, ['sadd', 'srem', 'smembers', 'scard', 'sismember']],
  [
    CommandForm.setOther,
    [
      'smismember',
      'spop',
      'srandmember',
      'smove',
      'sscan',
      'sinter',
      'sintercard',
      'sinterstore',
      'sunion',
      'sunionstore',
      'sdiff',
      'sdiffstore',
    ],
  ],
  [CommandForm.zsetSplit, ['zadd', 'zrem', 'zscore', 'zcard', 'zrange', 'zrevrange']],
  [
    CommandForm.zsetOther,
    [
      'zincrby',
      'zmscore',
      'zcount',
      'zlexcount',
      'zrank',
      'zrevrank',
      'zrangebyscore',
      'zrevrangebyscore',
      'zrangebylex',
      'zrevrangebylex',
      'zrangestore',
      'zremrangebyrank',
      'zremrangebyscore',
      'zremrangebylex',
      'zpopmin',
      'zpopmax',
      'bzpopmin',
      'bzpopmax',
      'zmpop',
      'bzmpop',
      'zrandmember',
      'zscan',
      'zinter',
      'zintercard',
      'zinterstore',
      'zunion',
      'zunionstore',
      'zdiff',
      'zdiffstore',
    ],
  ],
]

/** Commands whose arguments decide whether a call is the split form or a foreign one (args include the key). */
const FORM_REFINERS: ReadonlyMap<string, (args: readonly unknown[]) => number> = new Map([
  ['set', (args: readonly unknown[]) => (isCopyWrite(args) ? CommandForm.set : CommandForm.stringOther)],
  [
    'zadd',
    (args: readonly unknown[]) => (isScorePairs(args) ? CommandForm.zsetSplit : CommandForm.zsetOther),
  ],
  ['zrange', rankRangeForm],
  ['zrevrange', rankRangeForm],
])

/**
 * Each command's form, 0 for the commands whose arguments decide it (FORM_REFINERS); commands not listed are
 * `other`.
 */
export const COMMAND_FORMS: ReadonlyMap<string, number> = new Map(
  FAMILIES.flatMap(([form, names]) =>
    names.map((name) => [name, FORM_REFINERS.has(name) ? 0 : form] as const),
  ),
)

/**
 * The form of one call: the spec's own, or for a command whose options decide it (its spec's form is 0) the
 * form its arguments (the key first) take. Agents ask only for keys the recorder already tracks, so these
 * argument checks stay off the path of cold keys.
 */
export function commandForm(spec: CommandSpec, args: readonly unknown[]): number {
  if (spec.form !== 0) return spec.form
  return FORM_REFINERS.get(spec.name)?.(args) ?? CommandForm.other
}

const EXPIRY_UNITS = ['EX', 'PX']
const ZADD_OPTIONS = ['NX', 'XX', 'GT', 'LT', 'CH', 'INCR']

// SET key value, or SET key value EX|PX n.
function isCopyWrite(args: readonly unknown[]): boolean {
  return args.length === 2 || (args.length === 4 && isAnyToken(args[2], EXPIRY_UNITS))
}

// ZADD key score member [score member ...] with no option before the first score.
function isScorePairs(args: readonly unknown[]): boolean {
  return args.length >= 3 && args.length % 2 === 1 && !isAnyToken(args[1], ZADD_OPTIONS)
}

// ZRANGE key start stop [WITHSCORES]: BYSCORE, BYLEX, REV and LIMIT are not rank ranges.
function rankRangeForm(args: readonly unknown[]): number {
  if (args.length === 3 || (args.length === 4 && isToken(args[3], 'WITHSCORES'))) return CommandForm.zsetSplit
  return CommandForm.zsetOther
}
