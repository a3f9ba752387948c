import type { ReplyShape } from './reply-shape.js'

/**
 * What a command does to the values of the keys it names. 'none' touches no key's value (PING, CLIENT, INFO,
 * PUBLISH, WATCH, SCAN). A 'write' command with no key indexes (FLUSHALL, FLUSHDB, SWAPDB) changes the whole
 * keyspace, so a cache in front of it must drop everything.
 */
export type CommandAccess = 'read' | 'write' | 'none'

/** What the data plane needs to know about one Redis command to decide how to handle a call of it. */
export interface CommandSpec {
  /** The command's name, lowercase, as ioredis and `COMMAND INFO` spell it. */
  readonly name: string
  /** From the flags: 'write' -> write; 'readonly' with keys -> read; else none. The table overrides a few. */
  readonly access: CommandAccess
  /**
   * Every call may block the connection (BLPOP, BLMOVE, BZMPOP, WAIT...). XREAD and XREADGROUP block only
   * with a BLOCK option, so they are false here: ask isBlocking(spec, args) for the answer for one call.
   */
  readonly blocking: boolean
  /** Part of publish/subscribe: the SUBSCRIBE family, PUBLISH, SPUBLISH, PUBSUB. */
  readonly pubsub: boolean
  /** Administrative: CONFIG, ACL, DEBUG, MONITOR, SHUTDOWN, REPLICAOF... never routed through a cache. */
  readonly admin: boolean
  /** MULTI, EXEC, DISCARD, WATCH, UNWATCH: connection state a proxy must keep on one server connection. */
  readonly transaction: boolean
  /** Redis refuses the command inside a Lua script or function. */
  readonly noScript: boolean
  /**
   * The reply depends only on the key's current value (not time, not randomness, not the connection): safe
   * to cache per (key, command, args). Only for a call with exactly one key: EXISTS is cacheable, yet a call
   * of it with several keys is not, so callers check the key count.
   */
  readonly cacheable: boolean
  /** How a cacheable command's reply looks (`CACHEABLE_REPLIES`), which decides how a cached one is handed back. */
  readonly reply: ReplyShape | undefined
  /**
   * Index into args (0-based, args exclude the command name) of the one key when the command always has
   * exactly one key at a fixed position, else -1. The hot path reads args[singleKey] without allocating.
   */
  readonly singleKey: number
  /**
   * The command's form family (a CommandForm bit), or 0 for the few commands whose options decide whether a
   * split key could answer them (SET, ZADD, ZRANGE, ZREVRANGE): ask commandForm(spec, args) for those.
   */
  readonly form: number
}

/** The key layout of a command as `COMMAND INFO` gives it (legacy first key, last key, step). */
export interface CommandData {
  /** Argument count including the name; negative means "at least". */
  readonly arity: number
  /** Redis' command flags: write, readonly, blocking, movablekeys, noscript, admin, pubsub... */
  readonly flags: readonly string[]
  /** Position of the first key counting the name as 0; 0 when the command has no fixed key. */
  readonly keyStart: number
  /** Position of the last key; negative counts from the end (-1 is the last argument). */
  readonly keyStop: number
  /** Distance between keys (2 for MSET's key-value pairs); 0 when there are no fixed keys. */
  readonly step: number
}
