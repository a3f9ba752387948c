import { randomBytes } from 'node:crypto'
import { acquireLease, releaseLease, renewLease } from '@heatsink/redis-script'
import { sleep } from './clock.js'
import type { SplitContext } from './context.js'
import { LeaseLostError } from './errors.js'
import { script } from './fan-out.js'

/**
 * A reshard's or fold's lease (the lease itself is @heatsink/redis-script's: SET NX PX with a random token,
 * compare-and-pexpire, compare-and-delete), renewed here at a third of its lifetime while held; a renewal that
 * finds it gone marks it lost, and work under it stops at its next assertHeld.
 */
export class Lease {
  readonly name: string
  readonly token: string
  readonly #ctx: SplitContext
  readonly #ttlMs: number
  #timer: unknown
  #lost = false
  #ended = false

  private constructor(ctx: SplitContext, name: string, token: string, ttlMs: number) {
    this.#ctx = ctx
    this.name = name
    this.token = token
    this.#ttlMs = ttlMs
    this.#schedule()
  }

  /** Takes the lease if it is free; undefined when another holder has it. */
  static async tryAcquire(ctx: SplitContext, name: string, ttlMs: number): Promise<Lease | undefined> {
    const token = `${ctx.agentId}:${randomBytes(8).toString('hex')}`
    const acquired = await acquireLease(ctx.fanOut.redis, name, token, ttlMs)
    return acquired ? new Lease(ctx, name, token, ttlMs) : undefined
  }

  /** Takes the lease, waiting (polling, with backoff) up to `timeoutMs` for the holder to let go. */
  static async acquire(
    ctx: SplitContext,
    name: string,
    ttlMs: number,
    timeoutMs: number,
    onTimeout: () => Error,
  ): Promise<Lease> {
    const deadline = ctx.clock.now() + timeoutMs
    for (let wait = 10; ; wait = Math.min(wait * 2, 250)) {
      const lease = await Lease.tryAcquire(ctx, name, ttlMs)
      if (lease !== undefined) return lease
      if (ctx.clock.now() >= deadline) throw onTimeout()
      await sleep(ctx.clock, wait)
    }
  }

  /** False once a renewal found the lease gone; work under it must stop. */
  get held(): boolean {
    return !this.#lost && !this.#ended
  }

  /** Throws LeaseLostError when the lease is no longer held. */
  assertHeld(): void {
    if (!this.held) throw new LeaseLostError(this.name)
  }

  /** Renews now; false (and the lease counts as lost) when it is no longer ours. */
  async renew(): Promise<boolean> {
    if (!this.held) return false
    const renewed = await renewLease(this.#ctx.fanOut.redis, this.name, this.token, this.#ttlMs)
    if (!renewed) this.#lost = true
    return renewed
  }

  /** Stops renewing and deletes the lease if still ours. */
  async release(): Promise<void> {
    if (this.#stop()) await releaseLease(this.#ctx.fanOut.redis, this.name, this.token)
  }

  /** Ends a fold: deletes the lease and the key's touched set in one step, if the lease is still ours. */
  async endFold(touched: string): Promise<boolean> {
    if (!this.#stop()) return false
    return (await this.#ctx.fanOut.one(script('endFold', [this.name, touched], this.token))) === 1
  }

  // Stops the renewal timer; false if the lease was already ended.
  #stop(): boolean {
    if (this.#ended) return false
    this.#ended = true
    if (this.#timer !== undefined) this.#ctx.clock.clearTimeout(this.#timer)
    return true
  }

  #schedule(): void {
    this.#timer = this.#ctx.clock.setTimeout(
      () => {
        this.#timer = undefined
        this.renew().then(
          (held) => held && this.#schedule(),
          // A failed renewal is not proof of loss; try again at the next tick, and let the TTL decide.
          () => this.held && this.#schedule(),
        )
      },
      Math.max(1, Math.floor(this.#ttlMs / 3)),
    )
  }
}
