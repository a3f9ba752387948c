/**
 * What the data-plane core decided for one command, for the transport (the ioredis front door, the RESP proxy)
 * to carry out. `undefined` (the common case, no allocation) means: send it to Redis unchanged, nothing more.
 */
export type Route = ServedRoute | DeferredRoute | SendRoute | AfterRoute

/** Answer now with `reply`, a reply as the Redis parser gives it; nothing goes to Redis. */
export interface ServedRoute {
  readonly kind: 'served'
  readonly reply: unknown
  /** The key read, when the command read one (for the transport's per-key counts). */
  readonly key?: string
}

/**
 * Answer with what `reply` resolves to; nothing goes to Redis on the client's connection. When it rejects with
 * FALL_THROUGH the transport sends the command after all (an L1 fill that could not run).
 */
export interface DeferredRoute {
  readonly kind: 'deferred'
  readonly reply: Promise<unknown>
  /** The connection's later commands wait until it settles (a split key's command: Redis's order). */
  readonly ordered?: boolean
  /**
   * A split key's command already sent, in the connection's order, on the one connection every such command
   * takes: the connection's later split commands of this kind follow it at once, its other commands wait until it
   * settles.
   */
  readonly pipelined?: boolean
}

/**
 * Wait until `ready` settles (it never rejects), then carry out `next()`, the command's route at that moment
 * (undefined: send it unchanged). The command keeps its place among the connection's replies; the transport
 * writes nothing for it until then. Commands behind a split key's command, or behind a fold, take this route.
 */
export interface AfterRoute {
  readonly kind: 'after'
  readonly ready: Promise<unknown>
  next(): Route | undefined
}

/**
 * Send the command (with `args` instead of its own when given), and hand its outcome to `settle`, whose return
 * value is what the client sees (a reply, or an Error to reject with).
 */
export interface SendRoute {
  readonly kind: 'send'
  readonly args?: unknown[]
  settle(error: Error | null, reply: unknown): unknown
}

/** The rejection of a deferred route that tells the transport to send the command to Redis itself. */
export const FALL_THROUGH: Error = Object.freeze(new Error('heatsink: send to redis'))

/** Per client connection: whether it is inside MULTI, and which keys its queued commands write. */
export class ConnectionState {
  inMulti = false
  queuedWrites: string[] = []
  /** Keys WATCHed since the last EXEC, DISCARD or UNWATCH: an EXEC answered nil was aborted on their account. */
  watched: string[] = []
  /**
   * Scripts and functions sent on this connection (they may write keys they do not declare) whose
   * invalidations Redis may not have delivered yet: while any is, this connection's reads skip L1 (see
   * ScriptBarriers).
   */
  unsettledScripts = 0
  /** Of those, the ones queued in the open MULTI: their barrier starts when EXEC or DISCARD is answered. */
  queuedScripts = 0
  /**
   * While set, an earlier command of this connection is still being carried out by the core (a split key's
   * command, a fold): every later command waits for it, so that Redis sees them in the connection's order.
   */
  tail: Promise<void> | undefined = undefined
  /**
   * While set, pipelined split commands of this connection (DeferredRoute.pipelined) are not all answered yet:
   * a later command that goes anywhere else waits for them.
   */
  splitTail: Promise<void> | undefined = undefined
}
