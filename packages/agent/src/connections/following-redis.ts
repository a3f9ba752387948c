import { Redis, type RedisOptions } from 'ioredis'

// How long an ended client waits before it connects again.
const RESTART_MS = 100

/**
 * An ioredis Sentinel client, and every duplicate() of it (the agent makes its own connections that way), that
 * drops its connection on `+switch-master` (failoverDetector) and never stays ended by accident. In ioredis 5.11,
 * +switch-master arriving while the client is already reconnecting (the primary crashed) aborts that connect and
 * ends the client for good; this one connects again unless its owner ended it (disconnect() or quit()).
 */
export class FollowingRedis extends Redis {
  #endedByOwner = false

  constructor(options: RedisOptions) {
    super({ ...options, failoverDetector: true, sentinelMaxConnections: 3 })
    // Mid-failover every reconnect fails (the dead primary, sentinels not yet agreed): the owner sees that in its
    // commands' results; an unlistened 'error' would only print each attempt to stderr.
    this.on('error', () => {})
    this.on('end', () => {
      if (this.#endedByOwner) return
      setTimeout(() => {
        if (!this.#endedByOwner && this.status === 'end') this.connect().catch(() => {})
      }, RESTART_MS).unref()
    })
  }

  override duplicate(override: Partial<RedisOptions> = {}): FollowingRedis {
    return new FollowingRedis({ ...this.options, ...override })
  }

  override disconnect(reconnect = false): void {
    if (!reconnect) this.#endedByOwner = true
    super.disconnect(reconnect)
  }

  override quit(callback?: (error?: Error | null, result?: 'OK') => void): Promise<'OK'> {
    this.#endedByOwner = true
    return super.quit(callback)
  }
}
