import { isSentinelUrl, keepSocketErrorsHandled, parseSentinelUrl } from '@heatsink/protocol'
import { Redis, type RedisOptions } from 'ioredis'
import { type ControlRedisAddress, urlLogin } from '../redis-connection.js'

// A node that does not answer INFO within this long counts as down for the sample.
const COMMAND_TIMEOUT_MS = 1000

/**
 * One connection per node sampled, made on first use and closed when the node leaves the topology or sampling
 * stops. Each logs in as the URL says (for a Sentinel URL, the primary's credentials, which its replicas share).
 */
export class NodeConnections {
  readonly #login: RedisOptions
  readonly #name: string
  readonly #open = new Map<string, Redis>()

  constructor(address: ControlRedisAddress, connectionName: string) {
    this.#login = loginOf(address)
    this.#name = connectionName
  }

  /**
   * `INFO default commandstats latencystats` of `node` (commandstats ranks the
   * commands); a server that takes one section only (before Redis 7) is asked for its default INFO.
   */
  async info(node: string): Promise<string> {
    const connection = this.#get(node)
    if (connection.status === 'wait') await connection.connect()
    try {
      return String(await connection.call('INFO', 'default', 'commandstats', 'latencystats'))
    } catch (error) {
      if (!/syntax/i.test((error as Error).message)) throw error
      return String(await connection.call('INFO'))
    }
  }

  #get(node: string): Redis {
    let connection = this.#open.get(node)
    if (connection === undefined) {
      const colon = node.lastIndexOf(':')
      connection = keepSocketErrorsHandled(
        new Redis({
          ...this.#login,
          host: node.slice(0, colon),
          port: Number(node.slice(colon + 1)),
          connectionName: this.#name,
          lazyConnect: true,
          // A down node fails its INFO at once and is tried again next sample, never queued behind a reconnect.
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          commandTimeout: COMMAND_TIMEOUT_MS,
          connectTimeout: COMMAND_TIMEOUT_MS,
          retryStrategy: () => COMMAND_TIMEOUT_MS,
        }),
      )
      // A down node's failures show in its INFO result (up: false, error); each reconnect attempt would only print.
      connection.on('error', () => {})
      this.#open.set(node, connection)
    }
    return connection
  }

  /** Closes the connections of nodes not in `nodes`. */
  keepOnly(nodes: ReadonlySet<string>): void {
    for (const [node, connection] of this.#open) {
      if (nodes.has(node)) continue
      connection.disconnect()
      this.#open.delete(node)
    }
  }

  closeAll(): void {
    this.keepOnly(new Set())
  }
}

function loginOf(address: ControlRedisAddress): RedisOptions {
  if (!isSentinelUrl(address.redisUrl)) return urlLogin(address.redisUrl)
  const { username, password, tls } = parseSentinelUrl(address.redisUrl)
  return { username, password, ...(tls === undefined ? {} : { tls }) }
}
