import { Command, type Redis } from 'ioredis'
import type { PendingFills } from '../l1/pending-fills.js'
import type { ReplyFill } from '../l1/reply-cache.js'
import type { AgentLogger } from '../options/agent-options.js'
import { ChannelState } from './channel-state.js'
import type { DatabaseMarker } from './database-marker.js'
import { onServerClose, type Subscriber, serverRunId } from './subscriber.js'

/** The channel Redis publishes tracking invalidations on when they are redirected to a RESP2 connection. */
export const TRACKING_CHANNEL = '__redis__:invalidate'

/**
 * Where L1 fills are read and how the agent learns that a filled key changed, whoever changed it. Standalone
 * and Cluster deployments implement it; `state` is up only while every subscription and tracking redirect is
 * live, and a down state makes the agent empty L1.
 */
export interface InvalidationChannels {
  readonly state: ChannelState
  start(): void
  /** Any read command on `key` with the key's PTTL, replies as the parser gives them, on a tracked connection. */
  fillReply(key: string, command: string, args: readonly unknown[]): Promise<ReplyFill>
  /**
   * Resolves once every invalidation Redis queued for the agent before the call has been applied: a PING on each
   * subscriber, answered behind the messages queued before it.
   */
  barrier(): Promise<unknown>
  close(): Promise<void>
}

/**
 * A connection whose reads Redis tracks (CLIENT TRACKING ON REDIRECT <subscriber id>), so that a later write
 * to a key it read, by any client, sends `__redis__:invalidate` to the subscriber. Tracking state lives with
 * the connection, and the redirect with the subscriber's id: after either reconnects, the state is down until
 * tracking has been switched on again towards the current subscriber. Fills in flight when the state goes down
 * are abandoned then (PendingFills), and any fill at the latest after its deadline, so no read waits on a
 * connection that is gone or stalled.
 */
export class TrackedConnection {
  readonly state = new ChannelState()
  readonly #connection: Redis
  readonly #subscriber: Subscriber
  readonly #fills: PendingFills
  readonly #log: AgentLogger
  readonly #marker: DatabaseMarker | undefined
  #attempt = 0

  /** `marker` watches the database for SWAPDB (standalone Redis; a Cluster has one database and no SWAPDB). */
  constructor(
    connection: Redis,
    subscriber: Subscriber,
    fills: PendingFills,
    log: AgentLogger,
    marker?: DatabaseMarker,
  ) {
    this.#connection = connection
    this.#subscriber = subscriber
    this.#fills = fills
    this.#log = log
    this.#marker = marker
    connection.on('ready', () => void this.#redirect())
    connection.on('close', () => this.#lost())
    onServerClose(connection, () => this.#lost())
    subscriber.state.watch((up) => {
      if (up) void this.#redirect()
      else this.#lost()
    })
  }

  start(): void {
    if (this.#connection.status === 'wait') this.#connection.connect().catch(() => {})
    this.#marker?.start(() => (this.state.up ? this.#connection : undefined))
  }

  stop(): void {
    this.#marker?.stop()
  }

  fillReply(key: string, command: string, args: readonly unknown[]): Promise<ReplyFill> {
    // Upper case, because ioredis keys its reply transformers (HGETALL's object) by the lower-case name: L1
    // keeps the parser's reply, and each caller's own command turns it into what that caller asked for.
    const read = new Command(command.toUpperCase(), [...args] as Array<string | Buffer>, {
      replyEncoding: null,
    })
    const pttl = new Command('PTTL', [key])
    // The connection may be of another ioredis than this package's (an application's ioredis 6 client while
    // the agent resolved 5), whose sendCommand calls setReplyContext, absent from ioredis 5's Command. These
    // replies take no transformer (the read's upper-case name, PTTL's integer), so the context changes nothing.
    for (const command of [read, pttl] as Array<Command & { setReplyContext?: () => void }>) {
      command.setReplyContext ??= () => {}
    }
    this.#marker?.beforeFill(this.#connection)
    this.#connection.sendCommand(read)
    this.#connection.sendCommand(pttl)
    return this.#fills.watch(key, Promise.all([read.promise, pttl.promise as Promise<number>]))
  }

  async #redirect(): Promise<void> {
    const attempt = ++this.#attempt
    const id = this.#subscriber.id
    if (id === undefined || this.#connection.status !== 'ready') return
    try {
      if ((await serverRunId(this.#connection)) !== this.#subscriber.server) {
        throw new Error('tracking connection and subscriber are on different servers')
      }
      // OFF first: the connection may still track towards a previous subscriber.
      await this.#connection.call('CLIENT', 'TRACKING', 'OFF')
      await this.#connection.call('CLIENT', 'TRACKING', 'ON', 'REDIRECT', String(id))
      if (attempt !== this.#attempt) return
      this.state.set(true)
      this.#log.debug({ redirect: id }, 'tracking on')
    } catch (error) {
      if (attempt !== this.#attempt) return
      this.#log.warn({ error: (error as Error).message }, 'tracking redirect failed, reconnecting')
      this.#connection.disconnect(true)
    }
  }

  #lost(): void {
    this.#attempt++
    this.#marker?.forget()
    this.state.set(false)
    this.#fills.abandonAll('the tracking connection or its redirect was lost')
  }
}

/** A standalone Redis: one subscriber for every channel, one tracked connection redirecting to it. */
export class StandaloneTracking implements InvalidationChannels {
  readonly #subscriber: Subscriber
  readonly #tracked: TrackedConnection

  constructor(subscriber: Subscriber, tracked: TrackedConnection) {
    this.#subscriber = subscriber
    this.#tracked = tracked
  }

  // The tracked connection is up only while its subscriber is, so its state is the whole channel's.
  get state(): ChannelState {
    return this.#tracked.state
  }

  start(): void {
    this.#subscriber.start()
    this.#tracked.start()
  }

  fillReply(key: string, command: string, args: readonly unknown[]): Promise<ReplyFill> {
    return this.#tracked.fillReply(key, command, args)
  }

  barrier(): Promise<unknown> {
    return this.#subscriber.ping()
  }

  async close(): Promise<void> {
    this.#tracked.stop()
    await this.#subscriber.close()
  }
}
