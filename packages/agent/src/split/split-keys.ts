import { SplitError, type Splitter } from '@heatsink/split'
import { type DeferredRoute, FALL_THROUGH } from '../data-plane/route.js'
import type { HotKey } from '../registry/hot-key.js'
import { CANONICAL_INTEGER, COUNTER_FORMS, type CounterForm } from './split-forms.js'

/** What SplitKeys needs of the agent. */
export interface SplitKeysParts {
  splitter: Splitter
  /** A split key's factor, resharding first when the registry changed it. */
  splitFactor(hot: HotKey): number
  /** Folds the key into its base key and keeps it there (no reconciler reopens it) until the registry changes. */
  hold(hot: HotKey, n: number): Promise<unknown>
}

/** Wait for `ready` (it never rejects; it resolves to the error that stopped the work, if any), then decide again. */
export interface SplitWait {
  readonly ready: Promise<Error | undefined>
}

/**
 * How this process serves a split key under one registry entry: 'counter' (its counter forms over the shards),
 * 'held' (folded into the base key: every command goes to Redis unchanged), or not yet known.
 */
interface KeyState {
  readonly version: number
  readonly n: number
  kind: 'counter' | 'held' | undefined
  /** The classification or fold under way; commands on the key wait for it. */
  pending: Promise<Error | undefined> | undefined
  /** The counter's last sum seen, to keep every reply a safe integer (see #withinRange). */
  sum: bigint
  /** Per client connection, the sum of the increments it sent in order (a read's correction, see #readInOrder). */
  readonly sent: WeakMap<object, bigint>
}

// Sums and increments beyond this are not exact as JavaScript numbers, nor as ioredis's integer replies.
const SAFE = BigInt(Number.MAX_SAFE_INTEGER)

/**
 * The data plane's rule for split keys: a command is served over the shards only when its reply is exactly the
 * unsplit key's (the counter forms of split-forms.ts, on a key that holds an integer without expiry); any other
 * command on the key folds it back into the base key first, and the key then stays folded in this process until
 * its registry entry changes, so that it never flips between layouts from one command to the next.
 */
export class SplitKeys {
  readonly #parts: SplitKeysParts
  // Per registry entry object: a demoted key's state goes with it.
  readonly #states = new WeakMap<HotKey, KeyState>()

  constructor(parts: SplitKeysParts) {
    this.#parts = parts
  }

  /**
   * A single-key command on split key `name`: a deferred route (served over the shards), a wait (the key is
   * being classified or folded), or undefined (send it to Redis unchanged).
   */
  route(
    command: string,
    rest: readonly unknown[],
    name: string,
    hot: HotKey,
    queued: boolean,
    connection: object,
  ): DeferredRoute | SplitWait | undefined {
    const state = this.#state(hot)
    if (state.pending !== undefined) return { ready: state.pending }
    if (state.kind === 'held') return undefined
    const form = COUNTER_FORMS.get(command)
    // Inside MULTI a command is answered QUEUED, never by its value: the key is folded before it is queued.
    if (form === undefined || queued) return this.#fold(state, hot)
    const delta = form.delta(rest)
    if (delta === undefined) return undefined
    if (state.kind === undefined) return this.#classify(state, hot, name)
    if (!withinRange(state.sum, delta)) return this.#fold(state, hot)
    const reply = this.#serve(state, hot, name, form, delta, connection)
    // On one connection (a standalone Redis) each command is one script sent at once: they follow one another.
    return this.#parts.splitter.sendsInOrder
      ? { kind: 'deferred', pipelined: true, reply }
      : { kind: 'deferred', ordered: true, reply }
  }

  /** A command that names split key `hot` among other keys: the key is folded first (a wait), unless it is held. */
  foldFor(hot: HotKey): SplitWait | undefined {
    const state = this.#state(hot)
    if (state.pending !== undefined) return { ready: state.pending }
    return state.kind === 'held' ? undefined : this.#fold(state, hot)
  }

  #state(hot: HotKey): KeyState {
    const version = hot.entry.version
    const n = this.#parts.splitFactor(hot)
    let state = this.#states.get(hot)
    if (state === undefined || state.version !== version || state.n !== n) {
      state = {
        version,
        n,
        kind: n > 1 ? undefined : 'held',
        pending: undefined,
        sum: 0n,
        sent: new WeakMap(),
      }
      this.#states.set(hot, state)
    }
    return state
  }

  // A counter when the base key is absent, or a string holding a canonical integer with no expiry (shards have
  // none: an expiring counter would outlive its expiry), and the shards sum to a safe integer. A key another
  // process holds folded under this registry entry is held here too, with no fold of its own.
  #classify(state: KeyState, hot: HotKey, name: string): SplitWait {
    const splitter = this.#parts.splitter
    const reads = [splitter.baseShape(name), splitter.get(name, state.n), splitter.heldVersion(name)] as const
    const work = Promise.all(reads).then(
      ([base, sum, held]) => {
        if (held === hot.entry.version) {
          state.kind = 'held'
          return undefined
        }
        const counter =
          (base.type === 'none' || (base.type === 'string' && CANONICAL_INTEGER.test(base.value ?? ''))) &&
          base.pttl < 0 &&
          withinRange(BigInt(sum ?? 0), 0n)
        if (!counter) return this.#holdNow(state, hot)
        state.kind = 'counter'
        state.sum = BigInt(sum ?? 0)
        return undefined
      },
      // A shard that is not an integer: not a counter.
      () => this.#holdNow(state, hot),
    )
    return this.#pending(state, work)
  }

  #fold(state: KeyState, hot: HotKey): SplitWait {
    return this.#pending(state, this.#holdNow(state, hot))
  }

  async #holdNow(state: KeyState, hot: HotKey): Promise<Error | undefined> {
    try {
      await this.#parts.hold(hot, state.n)
      state.kind = 'held'
      return undefined
    } catch (error) {
      // Not held: the next command tries again; this one fails with the reason.
      state.kind = undefined
      return error as Error
    }
  }

  #pending(state: KeyState, work: Promise<Error | undefined>): SplitWait {
    const ready = work.finally(() => {
      if (state.pending === ready) state.pending = undefined
    })
    state.pending = ready
    return { ready }
  }

  // Promise chains rather than awaits: a split read is a hot path, and each await is another turn.
  #serve(
    state: KeyState,
    hot: HotKey,
    name: string,
    form: CounterForm,
    delta: bigint,
    connection: object,
  ): Promise<unknown> {
    const splitter = this.#parts.splitter
    const refused = (error: unknown) => this.#refused(state, hot, error)
    if (splitter.sendsInOrder) {
      const answer = (sum: bigint | null) =>
        this.#answer(state, hot, sum === null ? null : sum.toString(), form.write)
      if (!form.write) return this.#readInOrder(state, name, connection).then(answer, refused)
      // The write and the read of the sum after it are one script: nothing is written when it is refused.
      state.sent.set(connection, (state.sent.get(connection) ?? 0n) + delta)
      return splitter.counterInOrder(name, state.n, delta.toString()).then(answer, refused)
    }
    if (!form.write) {
      return splitter.get(name, state.n).then((read) => this.#answer(state, hot, read, false), refused)
    }
    // After a write the increment is in: a failed read fails the command, it cannot be sent again.
    return splitter
      .add(name, state.n, delta.toString())
      .then(() => splitter.get(name, state.n).then((read) => this.#answer(state, hot, read, true)), refused)
  }

  // The snapshot read, sent at once. While a drain is under way it declines, and the read with the gates comes
  // after this connection's increments sent since: those are taken out, so the GET answers as of its place.
  #readInOrder(state: KeyState, name: string, connection: object): Promise<bigint | null> {
    const splitter = this.#parts.splitter
    const before = state.sent.get(connection) ?? 0n
    return splitter.counterSnapshotInOrder(name, state.n).then((sum) => {
      if (sum !== undefined) return sum
      const since = (state.sent.get(connection) ?? 0n) - before
      return splitter.counterGatedRead(name, state.n).then((read) => (read === null ? null : read - since))
    })
  }

  #answer(state: KeyState, hot: HotKey, read: string | null, write: boolean): unknown {
    const sum = read === null ? 0n : BigInt(read)
    state.sum = sum
    // Another agent took the sum out of the exact range: later commands fold the key (Redis checks overflow).
    if (!withinRange(sum, 0n) && state.kind === 'counter') this.#fold(state, hot)
    if (write) return Number(sum)
    return read === null ? null : Buffer.from(read)
  }

  // The shards refused the command (a shard or the base key, written by something other than a counter, holds no
  // integer) before anything was written: the key is folded and Redis answers the command on the base key.
  async #refused(state: KeyState, hot: HotKey, error: unknown): Promise<never> {
    if (!(error instanceof SplitError)) throw error
    const failure = await this.#fold(state, hot).ready
    throw failure ?? FALL_THROUGH
  }
}

function withinRange(sum: bigint, delta: bigint): boolean {
  const total = (sum < 0n ? -sum : sum) + (delta < 0n ? -delta : delta)
  return total <= SAFE
}
