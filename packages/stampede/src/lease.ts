import { createHash, randomUUID } from 'node:crypto'
import { renewLease } from '@heatsink/redis-script'
import type { Clock } from '@heatsink/sketch'
import type { Cluster, Redis } from 'ioredis'
import { stampedeScripts } from './scripts.js'

/** Where one key's lease lives and how its end is announced. */
export interface LeaseTarget {
  key: string
  leaseKey: string
  /** The fill channel the lease scripts publish on; '' when `announce` publishes elsewhere (a control Redis). */
  channel: string
  /** Called with the key once a script ended its lease (see FillAnnouncer). */
  announce?: (key: string) => void
}

/** What a lease attempt found; `remainingMs` is the holder's lease PTTL (-1 for a lease without one). */
export type LeaseAttempt =
  | { kind: 'acquired'; lease: HeldLease; stored: string | null }
  | { kind: 'held'; remainingMs: number }
  | { kind: 'stored'; stored: string }

/** How a held lease is kept alive. */
export interface LeaseTiming {
  /** Time to live written with every acquisition and extension. */
  leaseMs: number
  /** Extensions stop this long after acquisition, so a hung loader cannot hold the key forever. */
  maxLeaseMs: number
}

/**
 * SET NX PX with a fresh owner token, reading the key in the same script. With `peek`, a key that already
 * holds a value is returned without touching the lease (a waiter's cheap re-check).
 */
export async function tryLease(
  redis: Redis | Cluster,
  target: LeaseTarget,
  owner: string,
  timing: LeaseTiming,
  clock: Clock,
  peek: boolean,
  onError: (error: unknown) => void,
): Promise<LeaseAttempt> {
  // Tokens come from crypto, not the injected random: two agents seeded alike must still never share one.
  const token = `${owner}:${randomUUID()}`
  const [status, payload] = await stampedeScripts.acquireLease(
    redis,
    target.key,
    target.leaseKey,
    token,
    timing.leaseMs,
    peek ? '1' : '0',
  )
  if (status === 2) return { kind: 'stored', stored: payload as string }
  if (status === 0) return { kind: 'held', remainingMs: Number(payload) }
  const stored = payload as string | null
  const lease = new HeldLease(redis, target, token, timing, clock, onError, digestOf(stored))
  return { kind: 'acquired', lease, stored }
}

/** SHA-1 hex of a value as Redis's redis.sha1hex computes it, '' for an absent key. */
function digestOf(value: string | null): string {
  return value === null ? '' : createHash('sha1').update(value).digest('hex')
}

/**
 * A lease this process owns. It is extended (@heatsink/redis-script's renewLease, compare-and-pexpire) every third
 * of its time to live while the load runs, and ends by exactly one of fill (store the value and release,
 * atomically) or release; both are conditional on the token, so a lease that ran out and passed to another owner
 * is never touched.
 *
 * Only the extension is the shared lease's: taking a fill lease reads the cache key in the same script (the
 * dogpile double-check, and the digest a fill compares), and releasing it publishes on the fill channel in the
 * same script, so waiting agents retry the moment it ends. The shared acquire and release would split each into
 * two steps, opening a window in which a waiter sees the lease gone but no announcement, or a value written
 * between the lease and the read.
 */
export class HeldLease {
  readonly token: string
  readonly #redis: Redis | Cluster
  readonly #target: LeaseTarget
  readonly #timing: LeaseTiming
  readonly #clock: Clock
  readonly #onError: (error: unknown) => void
  readonly #acquiredAt: number
  // What the key held when the lease was taken: the fill is refused if any write changed it since.
  readonly #seenDigest: string
  #timer: unknown
  #ended = false
  /** False once an extension found the lease gone: the fill will be refused. */
  held = true

  constructor(
    redis: Redis | Cluster,
    target: LeaseTarget,
    token: string,
    timing: LeaseTiming,
    clock: Clock,
    onError: (error: unknown) => void,
    seenDigest: string,
  ) {
    this.#seenDigest = seenDigest
    this.#redis = redis
    this.#target = target
    this.token = token
    this.#timing = timing
    this.#clock = clock
    this.#onError = onError
    this.#acquiredAt = clock.now()
    this.#schedule()
  }

  /** Stores `envelope` for `ttlMs` and releases, if still the owner; true when stored. */
  async fill(envelope: string, ttlMs: number): Promise<boolean> {
    this.#end()
    const { key, leaseKey, channel, announce } = this.#target
    const outcome = await stampedeScripts.fillLease(
      this.#redis,
      key,
      leaseKey,
      this.token,
      envelope,
      ttlMs,
      channel,
      key,
      this.#seenDigest,
    )
    // 0: the lease was no longer ours, so nothing of ours ended; 1 stored, 2 refused: the lease ended either way.
    if (outcome !== 0) announce?.(key)
    return outcome === 1
  }

  /** Releases without storing, if still the owner; never throws (the lease runs out anyway). */
  async release(): Promise<void> {
    if (this.#ended) return
    this.#end()
    const { key, leaseKey, channel, announce } = this.#target
    const released = await stampedeScripts
      .releaseLease(this.#redis, leaseKey, this.token, channel, key)
      .catch(this.#onError)
    if (released === 1) announce?.(key)
  }

  #end(): void {
    this.#ended = true
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer)
    this.#timer = undefined
  }

  #schedule(): void {
    const every = Math.max(1, Math.floor(this.#timing.leaseMs / 3))
    if (this.#clock.now() + every - this.#acquiredAt > this.#timing.maxLeaseMs) return
    this.#timer = this.#clock.setTimeout(() => {
      if (this.#ended) return
      this.#schedule()
      renewLease(this.#redis, this.#target.leaseKey, this.token, this.#timing.leaseMs).then((extended) => {
        if (!extended) {
          this.held = false
          this.#end()
        }
      }, this.#onError)
    }, every)
  }
}
