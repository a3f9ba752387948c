import type { ConnectionState } from './route.js'

// Scripts and functions may write keys they do not declare (Redis allows it outside Cluster), so no key list
// says what they changed. EVAL_RO, EVALSHA_RO and FCALL_RO cannot write.
const UNDECLARED_WRITERS: ReadonlySet<string> = new Set(['eval', 'evalsha', 'fcall'])

/** Whether `command` (lowercase) may write keys its arguments do not name. */
export function writesUndeclared(command: string): boolean {
  return UNDECLARED_WRITERS.has(command)
}

/**
 * Read-your-writes for scripts without emptying L1. Redis tracking reports every key a script writes, declared
 * or not, to the agent's subscriber, and queues those invalidations there before the script's reply leaves. A
 * PING on the subscriber sent once the reply is in (the barrier) is therefore answered after every one of them
 * has been applied. From the moment a script is sent until its barrier is answered, its connection's reads of
 * local_cache keys go to Redis behind it, in order; other connections and other keys keep L1.
 */
export class ScriptBarriers {
  readonly #barrier: () => Promise<unknown>

  /** `barrier` resolves once every invalidation Redis queued before it was called has been applied. */
  constructor(barrier: () => Promise<unknown>) {
    this.#barrier = barrier
  }

  /** A script is about to be sent on the connection of `state` (or queued in its MULTI). */
  sent(state: ConnectionState, queued: boolean): void {
    state.unsettledScripts++
    if (queued) state.queuedScripts++
  }

  /** `count` scripts of `state`'s connection were answered (or discarded): their barrier starts now. */
  answered(state: ConnectionState, count: number): void {
    const settle = () => {
      state.unsettledScripts -= count
    }
    // A barrier that fails lost the subscriber, and with it L1 (emptied on channel loss): nothing stale is left.
    this.#barrier().then(settle, settle)
  }

  /** The MULTI of `state` is gone with its connection: the scripts queued in it will never run. */
  dropQueued(state: ConnectionState): void {
    state.unsettledScripts -= state.queuedScripts
    state.queuedScripts = 0
  }
}
