import type { Mode, Unit } from './units.js'

/** A test the comparison lets fail (or does not run) in some modes, and why. */
export interface SuiteLimit {
  readonly unit: Unit
  /** The test's name as runtest prints it, or `/<regexp>` over names (runtest's own skipfile syntax). */
  readonly test: string
  readonly modes: readonly Mode[]
  /**
   * Why Heatsink cannot, or by design does not, behave as Redis there.
   */
  readonly reason: string
  /** Not run at all in these modes (runtest's --skipfile): the test hangs or breaks the tests after it. */
  readonly skip?: true
}

const ALL_MODES: readonly Mode[] = ['direct', 'proxy', 'auto', 'promoted']

/** Tests the suite cannot run in external mode even directly; they are skipped in every mode. */
export const SUITE_SKIPS: readonly SuiteLimit[] = [
  {
    unit: 'unit/type/set',
    test: 'SRANDMEMBER with a dict containing long chain',
    modes: ALL_MODES,
    reason: "reads the server's pid (get_child_pid), which runtest knows only for servers it starts itself",
    skip: true,
  },
]

const PROXY_MODES: readonly Mode[] = ['proxy', 'auto', 'promoted']
// The modes with an aggregator on the suite's Redis.
const CONTROL_PLANE_MODES: readonly Mode[] = ['auto', 'promoted']

// Reasons shared by several entries. Every one is "one Redis": Heatsink's own state and traffic share the server
// with the application's (docs/operations.md, "Heatsink's state in the application's Redis").
const BLOCKED_CLIENTS =
  "one Redis: the aggregator's blocking XREADGROUP reads count in INFO blocked_clients, which the test waits on"
const DBSIZE =
  "one Redis: DBSIZE counts Heatsink's own keys (report streams, registry snapshot) in database 0"
const REPLICATION_STREAM =
  "one Redis: the replication stream the test reads (SYNC, relayed by the proxy) carries Heatsink's own writes"
const OWN_NOTIFICATIONS =
  "one Redis: Heatsink's own messages (<namespace>:invalidate) and keyspace notifications of its keys reach the test's PSUBSCRIBE *"

/**
 * Tests that pass directly and are allowed to fail through the proxy, in the modes named: each a documented
 * limit, with its reason.
 */
export const SUITE_LIMITS: readonly SuiteLimit[] = [
  {
    unit: 'unit/type/string',
    test: 'DBSIZE should be 10000 now',
    modes: CONTROL_PLANE_MODES,
    reason: DBSIZE,
  },
  ...[
    '/with zero timeout should block indefinitely$',
    '/^BLMOVE \\(.*\\) with a client BLPOPing the target list$',
    'BRPOPLPUSH with wrong destination type',
    'BLMPOP with multiple blocked clients',
    'Linked LMOVEs',
    'Circular BRPOPLPUSH',
    'Self-referential BRPOPLPUSH',
    'BRPOPLPUSH timeout',
    '/: with 0.001 timeout should not block indefinitely$',
  ].map((test) => ({
    unit: 'unit/type/list' as const,
    test,
    modes: CONTROL_PLANE_MODES,
    reason: BLOCKED_CLIENTS,
  })),
  // A failure leaves the test's client in another database, and the tests after it in the unit time out.
  ...[
    'SWAPDB wants to wake blocked client, but the key already expired',
    'MULTI + LPUSH + EXPIRE + DEBUG SLEEP on blocked client, key already expired',
  ].map((test) => ({
    unit: 'unit/type/list' as const,
    test,
    modes: PROXY_MODES,
    reason: REPLICATION_STREAM,
    skip: true as const,
  })),
  ...[
    'SCAN: Lazy-expire should not be wrapped in MULTI/EXEC',
    'RANDOMKEY: Lazy-expire should not be wrapped in MULTI/EXEC',
  ].map((test) => ({ unit: 'unit/expire' as const, test, modes: PROXY_MODES, reason: REPLICATION_STREAM })),
  ...['Redis should actively expire keys incrementally', 'Redis should lazy expire keys'].map((test) => ({
    unit: 'unit/expire' as const,
    test,
    modes: CONTROL_PLANE_MODES,
    reason: DBSIZE,
  })),
  ...['BZMPOP with multiple blocked clients', 'BZMPOP should not blocks on non key arguments - #10762'].map(
    (test) => ({
      unit: 'unit/type/zset' as const,
      test,
      modes: CONTROL_PLANE_MODES,
      reason: BLOCKED_CLIENTS,
    }),
  ),
  ...['DBSIZE', 'COPY basic usage for string'].map((test) => ({
    unit: 'unit/keyspace' as const,
    test,
    modes: CONTROL_PLANE_MODES,
    reason: DBSIZE,
  })),
  { unit: 'unit/pubsub', test: '/^Keyspace notifications: ', modes: PROXY_MODES, reason: OWN_NOTIFICATIONS },
  {
    unit: 'unit/bitops',
    test: 'SETBIT/BITFIELD only increase dirty when the value changed',
    modes: PROXY_MODES,
    reason: "one Redis: Heatsink's own writes (report streams) count in INFO's rdb_changes_since_last_save",
  },
  {
    unit: 'unit/scripting',
    test: 'Consistent eval error reporting',
    modes: CONTROL_PLANE_MODES,
    reason: "one Redis: errors answered to Heatsink's own commands count in INFO errorstats",
  },
  {
    unit: 'unit/scripting',
    test: 'SCRIPTING FLUSH ASYNC',
    modes: CONTROL_PLANE_MODES,
    reason: "one Redis: Heatsink's own Lua scripts count in INFO's number_of_cached_scripts",
  },
]

/** Whether `limit` names the test `name` (the ` (run 2)` suffix of a repeated name is ignored). */
export function limitMatches(limit: SuiteLimit, unit: string, name: string): boolean {
  if (limit.unit !== unit) return false
  const base = name.replace(/ \(run \d+\)$/, '')
  if (limit.test.startsWith('/')) return new RegExp(limit.test.slice(1)).test(base)
  return limit.test === base
}
