import type { HeatsinkNames } from '@heatsink/protocol'
import type { Clock } from '@heatsink/sketch'
import type { Cluster, Redis } from 'ioredis'

/**
 * The pub/sub channel on which a lease's end is announced (a fill, a release, a write or delete that broke
 * it); the message is the cache key. Every agent of the namespace listens, and only loads publish, so the
 * traffic is one message per load, not per read.
 */
export function fillChannel(names: HeatsinkNames): string {
  return `${names.namespace}:filled`
}

/**
 * Where the end of a lease is announced on the fill channel. By default the lease scripts publish it themselves,
 * in the same step, on the Redis that holds the lease. With a control Redis the scripts publish nothing (the
 * application's Redis then carries no channel of Heatsink's) and the ends they report are published on the
 * control Redis right after: an announcement only wakes waiters sooner, who poll anyway, so it need not be atomic
 * with the lease's end.
 */
export class FillAnnouncer {
  readonly names: HeatsinkNames
  readonly channel: string
  /** The channel the lease scripts publish on: the fill channel, or '' when announcements go to the control Redis. */
  readonly scriptChannel: string
  readonly #control: Redis | Cluster | undefined

  constructor(names: HeatsinkNames, control?: Redis | Cluster) {
    this.names = names
    this.channel = fillChannel(names)
    this.scriptChannel = control === undefined ? this.channel : ''
    this.#control = control
  }

  /** A script ended the leases of `keys`: announces them on the control Redis (the script did, without one). */
  ended(keys: readonly string[]): void {
    const control = this.#control
    if (control === undefined) return
    // Fire and forget: a lost announcement costs a waiter one poll interval, never a wrong value.
    for (const key of keys) control.publish(this.channel, key).catch(() => {})
  }
}

/** The announcer for `names` or the one given: write-throughs take either. */
export function announcerOf(names: HeatsinkNames | FillAnnouncer): FillAnnouncer {
  return names instanceof FillAnnouncer ? names : new FillAnnouncer(names)
}

/** A pending wait for one key's lease to end. */
export interface FillWait {
  /** Resolves on the announcement, when the armed time passes, or on cancel, whichever comes first. */
  readonly done: Promise<void>
  /** Bounds the wait to `ms` from now. */
  arm(ms: number): void
  cancel(): void
}

interface Wake {
  fire(): void
}

/**
 * Wakes lease waiters when their key's lease ends, instead of letting them poll blindly. Without a subscriber
 * of its own, the owner feeds it the channel's messages through wake().
 */
export class FillNotifier {
  readonly #subscriber: Redis | Cluster | undefined
  readonly #channel: string
  readonly #clock: Clock
  readonly #waits = new Map<string, Set<Wake>>()
  readonly #onMessage = (channel: string, message: string) => {
    if (channel === this.#channel) this.wake(message)
  }
  #subscribing: Promise<void> | undefined

  constructor(subscriber: Redis | Cluster | undefined, channel: string, clock: Clock) {
    this.#subscriber = subscriber
    this.#channel = channel
    this.#clock = clock
  }

  /** Subscribes; waits started before it resolves may miss announcements and fall back to their timeout. */
  ready(): Promise<void> {
    const subscriber = this.#subscriber
    if (subscriber === undefined) return Promise.resolve()
    this.#subscribing ??= (async () => {
      subscriber.on('message', this.#onMessage)
      await subscriber.subscribe(this.#channel)
    })()
    return this.#subscribing
  }

  /**
   * Starts listening for the end of `key`'s lease. Start it before the check it follows up, so an
   * announcement between the check and the wait is not missed; then arm it, or cancel it.
   */
  wait(key: string): FillWait {
    let wakes = this.#waits.get(key)
    if (wakes === undefined) {
      wakes = new Set()
      this.#waits.set(key, wakes)
    }
    const set = wakes
    const clock = this.#clock
    let timer: unknown
    let fired = false
    let fire!: () => void
    const done = new Promise<void>((resolve) => {
      fire = () => {
        fired = true
        if (timer !== undefined) clock.clearTimeout(timer)
        timer = undefined
        set.delete(wake)
        if (set.size === 0 && this.#waits.get(key) === set) this.#waits.delete(key)
        resolve()
      }
    })
    const wake: Wake = { fire }
    set.add(wake)
    return {
      done,
      arm: (ms) => {
        if (fired) return
        if (timer !== undefined) clock.clearTimeout(timer)
        timer = clock.setTimeout(fire, ms)
      },
      cancel: fire,
    }
  }

  /** Wakes every wait and stops listening; unsubscribes only the fill channel (the subscriber may be shared). */
  async close(): Promise<void> {
    for (const key of [...this.#waits.keys()]) this.wake(key)
    const subscriber = this.#subscriber
    if (subscriber === undefined) return
    subscriber.off('message', this.#onMessage)
    if (this.#subscribing !== undefined && subscriber.status === 'ready') {
      await subscriber.unsubscribe(this.#channel).catch(() => {})
    }
  }

  /** Wakes every wait on `key`: its lease ended (the channel's message). */
  wake(key: string): void {
    const wakes = this.#waits.get(key)
    if (wakes === undefined) return
    this.#waits.delete(key)
    for (const wake of [...wakes]) wake.fire()
  }
}
