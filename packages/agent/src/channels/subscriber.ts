import type { Redis } from 'ioredis'
import type { AgentLogger } from '../options/agent-options.js'
import { ChannelState } from './channel-state.js'

/** Receives every pub/sub message; `payload` is a Buffer, or for tracking invalidations a key list or null. */
export type MessageHandler = (channel: string, payload: Buffer | Buffer[] | null) => void

/**
 * One pub/sub connection. On every (re)connect it reads its CLIENT ID first, because a subscribed RESP2
 * connection cannot run CLIENT ID, and tracking connections need it to REDIRECT their invalidations here;
 * then it subscribes. `state` is up from the subscription's confirmation until the connection closes; a new
 * connection has a new id, so whoever redirected to the old one must redirect again.
 */
export class Subscriber {
  readonly state = new ChannelState()
  readonly #connection: Redis
  readonly #channels: readonly string[]
  readonly #log: AgentLogger
  #id: number | undefined
  #server: string | undefined
  // Increases on every connect and close, so that setup for a connection that is already gone stops.
  #attempt = 0
  #closed = false

  constructor(connection: Redis, channels: readonly string[], onMessage: MessageHandler, log: AgentLogger) {
    this.#connection = connection
    this.#channels = channels
    this.#log = log
    connection.on('messageBuffer', (channel: Buffer, payload: Buffer | Buffer[] | null) =>
      onMessage(channel.toString(), payload),
    )
    connection.on('ready', () => void this.#subscribe())
    connection.on('close', () => this.#lost())
    onServerClose(connection, () => this.#lost())
  }

  /** The server's id for this connection while subscribed; undefined otherwise. */
  get id(): number | undefined {
    return this.state.up ? this.#id : undefined
  }

  /** The run_id of the server this connection is subscribed on, while subscribed. */
  get server(): string | undefined {
    return this.state.up ? this.#server : undefined
  }

  start(): void {
    if (this.#connection.status === 'wait') this.#connection.connect().catch(() => {})
  }

  /** Answered after every message Redis queued for this connection before it (a subscribed RESP2 PING). */
  ping(): Promise<unknown> {
    return this.#connection.ping()
  }

  async close(): Promise<void> {
    this.#closed = true
    this.#attempt++
    this.state.set(false)
    if (this.#connection.status === 'ready') await this.#connection.unsubscribe().catch(() => {})
  }

  async #subscribe(): Promise<void> {
    const attempt = ++this.#attempt
    try {
      const [id, server] = await Promise.all([this.#connection.client('ID'), serverRunId(this.#connection)])
      if (attempt !== this.#attempt) return
      await this.#connection.subscribe(...this.#channels)
      if (attempt !== this.#attempt) return
      this.#id = id
      this.#server = server
      this.state.set(true)
      this.#log.debug({ id, channels: this.#channels }, 'subscribed')
    } catch (error) {
      if (attempt !== this.#attempt || this.#closed) return
      // Half set up is no use: reconnect and start over.
      this.#log.warn({ error: (error as Error).message }, 'subscribe failed, reconnecting')
      this.#connection.disconnect(true)
    }
  }

  #lost(): void {
    this.#attempt++
    this.#id = undefined
    this.#server = undefined
    if (this.state.up) this.#log.info({ channels: this.#channels }, 'subscriber connection lost')
    this.state.set(false)
  }
}

/**
 * Calls `lost` as soon as the server closes the connection: on the socket's 'end' (the EOF read, in the event
 * loop's poll phase), a full turn before ioredis's 'close' (from the handle's close callback). L1 hits answer
 * without yielding to I/O, so in that turn a read could return a value whose invalidation died with the
 * connection (measured by test/faults/subscriber-kill.test.ts: a write acknowledged, then a stale L1 hit).
 */
export function onServerClose(connection: Redis, lost: () => void): void {
  connection.on('connect', () => connection.stream.once('end', lost))
}

/**
 * The run_id of the server `connection` is on. Client ids are only unique per server: a tracking connection
 * and its subscriber that Sentinel sent to different servers during a failover (each asked a sentinel at another
 * moment) must not pair up, or invalidations would go to whatever client has that id on the tracking server.
 */
export async function serverRunId(connection: Redis): Promise<string> {
  const info = await connection.info('server')
  const runId = /^run_id:(\w+)/m.exec(info)?.[1]
  if (runId === undefined) throw new Error('INFO server gave no run_id')
  return runId
}
