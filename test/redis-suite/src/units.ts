/**
 * The 18 units of Redis 7.0.15's suite that cover what a cache client sends (the data types, expiry, the keyspace,
 * transactions, scripts and functions, pub/sub, SORT, SCAN, DUMP, INFO and the protocol itself), as runtest's
 * `--single` names them.
 */
export const UNITS = [
  'unit/type/string',
  'unit/type/incr',
  'unit/type/list',
  'unit/type/hash',
  'unit/type/set',
  'unit/type/zset',
  'unit/expire',
  'unit/keyspace',
  'unit/multi',
  'unit/scripting',
  'unit/pubsub',
  'unit/info-command',
  'unit/bitops',
  'unit/dump',
  'unit/sort',
  'unit/scan',
  'unit/functions',
  'unit/protocol',
] as const

/** One of UNITS. */
export type Unit = (typeof UNITS)[number]

/** How the suite reaches Redis: directly, or through the proxy with no, automatic or manual promotion. */
export const MODES = ['direct', 'proxy', 'auto', 'promoted'] as const

/** One of MODES. */
export type Mode = (typeof MODES)[number]

/** The modes whose results are held against the direct run. */
export const PROXY_MODES: readonly Mode[] = ['proxy', 'auto', 'promoted']

/**
 * The modes that run the suite with `--singledb`, on database 0: the proxy applies mitigations to keys of its
 * backend's database only (0 here), and the suite otherwise works in database 9. The tests that need other
 * databases (SELECT, MOVE, SWAPDB) skip themselves there and run in the direct and proxy modes.
 */
export const SINGLE_DB_MODES: readonly Mode[] = ['auto', 'promoted']
