import type { SplitContext } from './context.js'
import { drainShard } from './drain.js'
import { InvalidSplitOptionError } from './errors.js'
import { call, script } from './fan-out.js'
import { decodeGate, readGate } from './gate.js'
import { staysHeld } from './held-fold.js'
import { collectJournal } from './journal.js'
import type { SplitLayout, SplitShard } from './layout.js'
import { Lease } from './lease.js'

/** A key the registry currently has split, with its split factor. */
export interface SplitKeyRef {
  readonly key: string
  readonly n: number
  /** The registry version of the key's entry: a layout held folded under it is left folded (held-fold.ts). */
  readonly version?: number
}

/** Options of startReconciler. */
export interface ReconcilerOptions {
  /** Time between passes. */
  readonly intervalMs: number
  /** The keys split right now (the agent's registry view); asked at every pass. */
  readonly keys: () => Iterable<SplitKeyRef> | Promise<Iterable<SplitKeyRef>>
  /** Lifetime of the reconciler lease, renewed while held. Default: the splitter's leaseMs. */
  readonly leaseMs?: number
  /** Called with the report of every timed pass (for metrics and logs). */
  readonly onPass?: (report: ReconcileReport) => void
  /** Called with the error of a pass that failed; the next pass runs as planned. */
  readonly onError?: (error: unknown) => void
}

/** What one pass did. */
export interface ReconcileReport {
  /** False when another agent holds the reconciler lease: this pass did nothing. */
  readonly leader: boolean
  readonly keys: number
  /** Counter shards whose value was moved into the base key. */
  readonly rebalanced: number
  /** Counter value moved, as a decimal string. */
  readonly moved: string
  /** Drains found sealed and unfinished (their agent died) and finished here. */
  readonly resumed: number
  /** Gates of active layouts found closed by an earlier fold and reopened. */
  readonly reopened: number
  /** Shards of folded layouts found holding data again and drained. */
  readonly strays: number
  /** Counter journal entries deleted. */
  readonly journal: number
}

interface Tally {
  rebalanced: number
  moved: bigint
  resumed: number
  reopened: number
  strays: number
  journal: number
}

/**
 * The background job that keeps split keys tidy, run by one agent at a time (the holder of
 * `names.splitReconcilerLeaseKey`), and within it one key at a time under the key's fold lease, so it never
 * overlaps a fold. For each split key it:
 *
 * - rebalances counters: moves the value of the shard that drifted furthest into the base key (a drain that
 *   reopens the shard), one shard per key and pass. Shards fed by random picks drift apart; the sum does not care,
 *   but keeping the bulk in the base key bounds every shard, makes a later fold nearly free, and lets an agent
 *   whose view lags behind a promotion read nearly all of it;
 * - finishes drains left sealed by an agent that died, and reopens gates of the active layout that an earlier
 *   fold closed (a key split again with the same factor);
 * - deletes counter journal entries no reader needs any more.
 *
 * It also re-checks layouts folded within foldedRecheckMs (names.splitFoldedKey) and drains anything found in
 * them: writes from an agent whose view lagged past the closed gates' lifetime, or a stale re-activation.
 */
export class Reconciler {
  readonly #ctx: SplitContext
  readonly #options: ReconcilerOptions
  readonly #leaseMs: number
  #lease: Lease | undefined
  #timer: unknown
  #running: Promise<unknown> | undefined
  #stopped = false

  constructor(ctx: SplitContext, options: ReconcilerOptions) {
    if (!(Number.isFinite(options.intervalMs) && options.intervalMs > 0)) {
      throw new InvalidSplitOptionError(
        'intervalMs',
        `must be a finite number > 0, received ${options.intervalMs}`,
      )
    }
    this.#ctx = ctx
    this.#options = options
    this.#leaseMs = options.leaseMs ?? ctx.settings.leaseMs
  }

  /** Starts the timer; the first pass runs after intervalMs. */
  start(): this {
    this.#schedule()
    return this
  }

  /** Whether this reconciler holds the lease (as of its last pass). */
  get leader(): boolean {
    return this.#lease?.held ?? false
  }

  /** Stops the timer, waits for a pass under way, and releases the lease. */
  async stop(): Promise<void> {
    this.#stopped = true
    if (this.#timer !== undefined) this.#ctx.clock.clearTimeout(this.#timer)
    await this.#running?.catch(() => {})
    await this.#lease?.release().catch(() => {})
    this.#lease = undefined
  }

  /** Runs one pass now (taking the lease if free). */
  async runOnce(): Promise<ReconcileReport> {
    const run = this.#pass()
    this.#running = run
    try {
      return await run
    } finally {
      if (this.#running === run) this.#running = undefined
    }
  }

  #schedule(): void {
    if (this.#stopped) return
    this.#timer = this.#ctx.clock.setTimeout(() => {
      this.#timer = undefined
      this.runOnce()
        .then(
          (report) => this.#options.onPass?.(report),
          (error: unknown) => this.#options.onError?.(error),
        )
        .finally(() => this.#schedule())
    }, this.#options.intervalMs)
  }

  async #pass(): Promise<ReconcileReport> {
    const ctx = this.#ctx
    if (this.#lease === undefined || !this.#lease.held) {
      // The leader lease lives on the control Redis (the data Redis when there is none).
      const leaderCtx = { ...ctx, fanOut: ctx.controlFanOut }
      this.#lease = await Lease.tryAcquire(leaderCtx, ctx.names.splitReconcilerLeaseKey, this.#leaseMs)
    }
    const tally: Tally = { rebalanced: 0, moved: 0n, resumed: 0, reopened: 0, strays: 0, journal: 0 }
    if (this.#lease === undefined) return report(false, 0, tally)
    const active = new Map<string, number>()
    for (const { key, n, version } of await this.#options.keys()) {
      // A held layout is tidied as a folded one (#recheckFolded drains what reaches its shards), never reopened.
      if (n > 1 && (version === undefined || !(await staysHeld(ctx, key, version)))) active.set(key, n)
    }
    for (const [key, n] of active) {
      if (this.#stopped || !this.leader) break
      await this.#underKeyLease(key, (lease) => this.#tidyActive(ctx.layouts.get(key, n), lease, tally))
      tally.journal += await collectJournal(ctx, key)
    }
    await this.#recheckFolded(active, tally)
    return report(true, active.size, tally)
  }

  async #tidyActive(layout: SplitLayout, lease: Lease, tally: Tally): Promise<void> {
    const ctx = this.#ctx
    const states = await this.#shardStates(layout)
    const values = await ctx.fanOut.all(
      states.flatMap(({ shard, type }) => (type === 'string' ? [call('get', shard.data)] : [])),
    )
    let next = 0
    let drifted: { shard: SplitShard; size: bigint } | undefined
    for (const { shard, gate, type } of states) {
      const value = type === 'string' ? (values[next++] as string | null) : null
      if (gate.state === 'merged') {
        tally.reopened += Number(await ctx.fanOut.one(script('reopenShard', [shard.gate])))
      } else if (gate.state === 'sealed') {
        const outcome = await drainShard(ctx, layout, shard, 1, 'open', lease)
        tally.resumed++
        tally.moved += outcome.moved
      } else if (value !== null && /^-?\d+$/.test(value)) {
        const size = BigInt(value) < 0n ? -BigInt(value) : BigInt(value)
        if (size > 0n && (drifted === undefined || size > drifted.size)) drifted = { shard, size }
      }
    }
    // One shard per key and pass, the one that drifted furthest: at most one gate of the key is closed at a time
    // (its writers go to the base key meanwhile), and the journal stays a few entries long.
    if (drifted !== undefined) {
      const outcome = await drainShard(ctx, layout, drifted.shard, 1, 'open', lease)
      tally.rebalanced++
      tally.moved += outcome.moved
    }
  }

  async #recheckFolded(active: ReadonlyMap<string, number>, tally: Tally): Promise<void> {
    const ctx = this.#ctx
    const folded = ctx.names.splitFoldedKey
    const now = ctx.clock.now()
    await ctx.fanOut.one(call('zremrangebyscore', folded, '-inf', now))
    const layouts = (await ctx.fanOut.one(call('zrangebyscore', folded, now, '+inf'))) as string[]
    for (const entry of layouts) {
      if (this.#stopped || !this.leader) return
      const cut = entry.indexOf(':')
      const n = Number(entry.slice(0, cut))
      const key = entry.slice(cut + 1)
      if (active.get(key) === n) continue
      const layout = ctx.layouts.get(key, n)
      await this.#underKeyLease(key, async (lease) => {
        for (const { shard, gate, type } of await this.#shardStates(layout)) {
          if (gate.state === 'merged' && type === 'none') continue
          const outcome = await drainShard(ctx, layout, shard, active.get(key) ?? 1, 'merged', lease, {
            keepBaseScores: true,
          })
          if (outcome.drained) tally.strays++
          tally.moved += outcome.moved
        }
      })
      tally.journal += await collectJournal(ctx, key)
    }
  }

  async #shardStates(layout: SplitLayout) {
    const replies = await this.#ctx.fanOut.all(
      layout.shards.flatMap((shard) => [readGate(shard), call('type', shard.data)]),
    )
    return layout.shards.map((shard, i) => ({
      shard,
      gate: decodeGate(replies[2 * i]),
      type: replies[2 * i + 1] as string,
    }))
  }

  // Runs `work` under the key's fold lease, skipping the key when a fold holds it.
  async #underKeyLease(key: string, work: (lease: Lease) => Promise<void>): Promise<void> {
    const ctx = this.#ctx
    const lease = await Lease.tryAcquire(ctx, ctx.names.splitLeaseKey(key), ctx.settings.leaseMs)
    if (lease === undefined) return
    try {
      await work(lease)
      await lease.endFold(ctx.names.splitTouchedKey(key))
    } finally {
      await lease.release().catch(() => {})
    }
  }
}

function report(leader: boolean, keys: number, tally: Tally): ReconcileReport {
  return { leader, keys, ...tally, moved: tally.moved.toString() }
}
