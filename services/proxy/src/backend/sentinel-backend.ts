import { isIP } from 'node:net'
import type { ConnectionOptions } from 'node:tls'
import { FollowingRedis } from '@heatsink/agent'
import {
  InvalidRedisUrlError,
  keepSocketErrorsHandled,
  parseSentinelUrl,
  type SentinelUrlOptions,
} from '@heatsink/protocol'
import type { Redis, RedisOptions } from 'ioredis'
import { BackendAddressError } from '../errors.js'
import type { BackendAddress } from './backend-address.js'
import { type NodeAddress, SentinelPrimary } from './sentinel-primary.js'

/** What a Sentinel backend takes of the proxy's options. */
export interface SentinelBackendOptions {
  readonly backend: string
  readonly sentinelPassword?: string
  readonly backendTls?: ConnectionOptions
  readonly cluster?: boolean
}

/**
 * A redis+sentinel:// backend: the primary's address for the pool, kept current through failovers, and ioredis
 * clients (the agent's, a Sentinel control Redis) that follow the primary the same way.
 */
export class SentinelBackend {
  readonly #primary: SentinelPrimary
  readonly #options: SentinelUrlOptions
  readonly #url: string
  #address: BackendAddress

  private constructor(primary: SentinelPrimary, options: SentinelUrlOptions, url: string) {
    this.#primary = primary
    this.#options = options
    this.#url = url
    this.#address = this.#addressOf(primary.primary)
  }

  /** Parses the URL and finds the primary; rejects with BackendAddressError (bad URL) or when no primary answers. */
  static async start(options: SentinelBackendOptions): Promise<SentinelBackend> {
    if (options.cluster === true) {
      throw new BackendAddressError(
        'a redis+sentinel:// backend is not a Redis Cluster: leave the cluster option off',
      )
    }
    const parsed = sentinelOptions(options.backend, options)
    const primary = new SentinelPrimary({ sentinel: parsed })
    try {
      await primary.start()
    } catch (error) {
      primary.close()
      throw error
    }
    return new SentinelBackend(primary, parsed, options.backend)
  }

  /** An ioredis client of the URL's primary that follows it (for a control Redis given as redis+sentinel://). */
  static clientFor(url: string, options: Omit<SentinelBackendOptions, 'backend'>): Redis {
    return followingClient(sentinelOptions(url, options))
  }

  /** The primary's address as the pool connects to it. */
  get address(): BackendAddress {
    return this.#address
  }

  /** False while no primary answers (a failover in progress). */
  get reachable(): boolean {
    return this.#primary.reachable
  }

  /** The proxy saw a lost connection or READONLY: look for the primary again. */
  suspect(): void {
    this.#primary.suspect()
  }

  /** Calls `onSwitch` with the new primary's address (and ioredis options reaching it) on every switch. */
  follow(onSwitch: (address: BackendAddress, nodeOptions: RedisOptions) => void): void {
    this.#primary.onSwitch = (primary) => {
      this.#address = this.#addressOf(primary)
      onSwitch(this.#address, this.#primary.nodeOptions(primary))
    }
  }

  /** Calls `onReachable` each time a primary answers again after trouble or a switch. */
  whenReachable(onReachable: () => void): void {
    this.#primary.onReachable = onReachable
  }

  /** A new ioredis client of the primary that follows it: the agent's. */
  client(): Redis {
    return followingClient(this.#options)
  }

  close(): void {
    this.#primary.close()
  }

  #addressOf(node: NodeAddress): BackendAddress {
    const tls = this.#options.tls
    return {
      host: node.host,
      port: node.port,
      username: this.#options.username,
      password: this.#options.password,
      db: this.#options.db,
      tls:
        tls === undefined ? undefined : { ...(isIP(node.host) === 0 && { servername: node.host }), ...tls },
      url: this.#url,
    }
  }
}

// The URL's options with the proxy's TLS options (CA, client certificate) wherever the URL asks for TLS.
function sentinelOptions(url: string, options: Omit<SentinelBackendOptions, 'backend'>): SentinelUrlOptions {
  let parsed: SentinelUrlOptions
  try {
    parsed = parseSentinelUrl(url, { sentinelPassword: options.sentinelPassword })
  } catch (error) {
    if (error instanceof InvalidRedisUrlError) throw new BackendAddressError(error.message, { cause: error })
    throw error
  }
  const extra = options.backendTls ?? {}
  return {
    ...parsed,
    ...(parsed.tls !== undefined && { tls: { ...parsed.tls, ...extra } }),
    ...(parsed.sentinelTLS !== undefined && { sentinelTLS: { ...parsed.sentinelTLS, ...extra } }),
  } as SentinelUrlOptions
}

function followingClient(options: SentinelUrlOptions): Redis {
  return keepSocketErrorsHandled(new FollowingRedis({ ...options }))
}
