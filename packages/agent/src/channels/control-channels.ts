import type { ReplyFill } from '../l1/reply-cache.js'
import { ChannelState } from './channel-state.js'
import type { InvalidationChannels } from './tracking.js'

/** The control Redis's channels: a Subscriber, or on a Cluster control Redis its ClusterTracking. */
type ControlSubscription = Pick<InvalidationChannels, 'state' | 'start' | 'close'>

/**
 * The agent's channels when Heatsink's control Redis is apart from the data Redis: tracking, and L1's fills, on
 * the data Redis (standalone or Cluster); the registry, invalidation, tuning and fill channels on a subscriber
 * of the control Redis. Each connection reconnects and resubscribes on its own. The state is up only while both
 * are: losing either may lose invalidations, so L1 is emptied, and when both are back the agent reads the
 * registry snapshot and tuning again, as after any loss (see Agent's channel handling).
 */
export class ControlChannels implements InvalidationChannels {
  readonly state = new ChannelState()
  readonly #tracking: InvalidationChannels
  readonly #control: ControlSubscription

  constructor(tracking: InvalidationChannels, control: ControlSubscription) {
    this.#tracking = tracking
    this.#control = control
    const update = () => this.state.set(tracking.state.up && control.state.up)
    tracking.state.watch(update)
    control.state.watch(update)
  }

  start(): void {
    this.#control.start()
    this.#tracking.start()
  }

  fillReply(key: string, command: string, args: readonly unknown[]): Promise<ReplyFill> {
    return this.#tracking.fillReply(key, command, args)
  }

  // What a barrier waits for is tracking's invalidations of a script's writes, which come from the data Redis.
  barrier(): Promise<unknown> {
    return this.#tracking.barrier()
  }

  async close(): Promise<void> {
    await Promise.all([this.#tracking.close(), this.#control.close()])
  }
}
