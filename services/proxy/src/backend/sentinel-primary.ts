import type { SentinelUrlOptions } from '@heatsink/protocol'
import { keepSocketErrorsHandled } from '@heatsink/protocol'
import { Redis, type RedisOptions } from 'ioredis'
import { oneCommand } from './one-command.js'

/** A data node's address. */
export interface NodeAddress {
  readonly host: string
  readonly port: number
}

/** Options of SentinelPrimary. */
export interface SentinelPrimaryOptions {
  /** What the redis+sentinel:// URL gave (parseSentinelUrl). */
  readonly sentinel: SentinelUrlOptions
  /** How often the sentinels are asked again while no primary answers; default 100 ms. */
  readonly retryMs?: number
}

/**
 * Follows the primary a set of sentinels names for one master. The address comes from the first sentinel that
 * answers SENTINEL GET-MASTER-ADDR-BY-NAME and is only taken once ROLE there says `master`: mid-failover a
 * sentinel may still name a primary that is already demoted or dead. Listens for `+switch-master` (and `+odown`)
 * on every sentinel, and searches again whenever the proxy reports trouble (a lost connection, a READONLY reply);
 * `reachable` is false from then until a primary answers.
 */
export class SentinelPrimary {
  readonly #options: SentinelPrimaryOptions
  readonly #subscribers: Redis[] = []
  #current: NodeAddress | undefined
  #reachable = false
  #searching: Promise<void> | undefined
  #announced: NodeAddress | undefined
  #closed = false
  /** Called with the new primary each time it changes (not for the first one, which start() returns). */
  onSwitch: (primary: NodeAddress) => void = () => {}
  /** Called each time a search ends with a primary that answers (after onSwitch when it changed). */
  onReachable: () => void = () => {}

  constructor(options: SentinelPrimaryOptions) {
    this.#options = options
  }

  /** The primary last found; start() must have resolved. */
  get primary(): NodeAddress {
    if (this.#current === undefined) throw new Error('no primary known yet: start() first')
    return this.#current
  }

  /** False while the search for a primary runs (after trouble or a switch), true once one answered as primary. */
  get reachable(): boolean {
    return this.#reachable
  }

  /** Finds the primary and starts listening; rejects when none answers within `timeoutMs`. */
  async start(timeoutMs = 10_000): Promise<NodeAddress> {
    for (const sentinel of this.#options.sentinel.sentinels) this.#subscribe(sentinel)
    const deadline = Date.now() + timeoutMs
    let found = await this.#find()
    while (found === undefined && !this.#closed && Date.now() < deadline) {
      await delay(this.#options.retryMs ?? 100)
      found = await this.#find()
    }
    if (found === undefined) {
      const where = this.#options.sentinel.sentinels.map((s) => `${s.host}:${s.port}`).join(', ')
      throw new Error(
        `no sentinel at ${where} named a primary for '${this.#options.sentinel.name}' within ${timeoutMs} ms`,
      )
    }
    this.#current = found
    this.#reachable = true
    return found
  }

  /**
   * The proxy saw trouble on the primary, or a sentinel announced `announced` as the new one: search again (once at
   * a time), unready until a primary answers.
   */
  suspect(announced?: NodeAddress): void {
    if (this.#closed || this.#current === undefined) return
    if (announced !== undefined) this.#announced = announced
    this.#reachable = false
    this.#searching ??= this.#search().finally(() => {
      this.#searching = undefined
    })
  }

  close(): void {
    this.#closed = true
    for (const subscriber of this.#subscribers) subscriber.disconnect()
  }

  async #search(): Promise<void> {
    while (!this.#closed) {
      const found = await this.#find()
      if (found !== undefined) {
        const previous = this.#current
        this.#current = found
        if (previous?.host !== found.host || previous.port !== found.port) this.onSwitch(found)
        this.#reachable = true
        this.onReachable()
        return
      }
      await delay(this.#options.retryMs ?? 100)
    }
  }

  // The announced primary if it answers ROLE as one, else the current one if it still does, else the first a
  // sentinel names that does; undefined when none does now. Sentinels learn of a switch one after another (the
  // leader first, the others from its hello messages up to seconds later) while the demoted primary still answers
  // as a primary until it is reconfigured: asking in that order never moves back to it.
  async #find(): Promise<NodeAddress | undefined> {
    const announced = this.#announced
    if (announced !== undefined) {
      this.#announced = undefined
      if (await this.#isPrimary(announced)) return announced
    }
    if (this.#current !== undefined && (await this.#isPrimary(this.#current))) return this.#current
    for (const sentinel of this.#options.sentinel.sentinels) {
      const named = await this.#ask(sentinel)
      if (named !== undefined && (await this.#isPrimary(named))) return named
    }
    return undefined
  }

  async #ask(sentinel: NodeAddress): Promise<NodeAddress | undefined> {
    const reply = await oneCommand(this.#sentinelOptions(sentinel), (client) =>
      client.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', this.#options.sentinel.name),
    )
    return Array.isArray(reply) && reply.length === 2
      ? { host: String(reply[0]), port: Number(reply[1]) }
      : undefined
  }

  async #isPrimary(node: NodeAddress): Promise<boolean> {
    const role = await oneCommand(this.nodeOptions(node), (client) => client.call('ROLE'))
    return Array.isArray(role) && role[0] === 'master'
  }

  /** ioredis options for a data node of this deployment: the URL's login and TLS. */
  nodeOptions(node: NodeAddress): RedisOptions {
    const { username, password, tls, enableTLSForSentinelMode } = this.#options.sentinel
    return { ...node, username, password, ...(enableTLSForSentinelMode && tls !== undefined && { tls }) }
  }

  #sentinelOptions(sentinel: NodeAddress): RedisOptions {
    const { sentinelUsername, sentinelPassword, sentinelTLS } = this.#options.sentinel
    return {
      ...sentinel,
      username: sentinelUsername,
      password: sentinelPassword,
      ...(sentinelTLS !== undefined && { tls: sentinelTLS }),
    }
  }

  // Sentinel announces `<master> <old-ip> <old-port> <new-ip> <new-port>` once the new primary is in place, and
  // `+odown master <master> <ip> <port>` as soon as it agrees the primary is down: the first starts the move, the
  // second makes /healthz fail before the election is over.
  #subscribe(sentinel: NodeAddress): void {
    const subscriber = keepSocketErrorsHandled(
      new Redis({
        ...this.#sentinelOptions(sentinel),
        // A sentinel that is down is retried every second for as long as the proxy runs.
        retryStrategy: () => 1000,
        connectionName: 'heatsink-proxy:sentinel',
      }),
    )
    subscriber.on('error', () => {})
    subscriber.on('message', (channel: string, message: string) => {
      const words = message.split(' ')
      if (channel === '+switch-master' && words[0] === this.#options.sentinel.name) {
        this.suspect({ host: words[3] as string, port: Number(words[4]) })
      } else if (channel === '+odown' && words[0] === 'master' && words[1] === this.#options.sentinel.name) {
        this.suspect()
      }
    })
    subscriber.subscribe('+switch-master', '+odown').catch(() => {})
    this.#subscribers.push(subscriber)
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}
