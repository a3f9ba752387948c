import { parseInfoReplicaLines } from '@heatsink/protocol'
import { Redis, type RedisOptions } from 'ioredis'
import type { OwnedConnections } from '../connections/connections.js'
import { roleOptions } from '../connections/connections.js'

/** Where a standalone primary's replicas are learnt: each call answers the addresses (host:port) usable now. */
export interface ReplicaAddresses {
  list(): Promise<string[]>
  close(): void
}

/**
 * A primary's replicas from its own INFO replication (`slaveN:ip=...,port=...,state=online`): for a primary
 * without Sentinel. Replicas not online (still syncing) are left out.
 */
export class InfoReplicaAddresses implements ReplicaAddresses {
  readonly #primary: Pick<Redis, 'info'>

  constructor(primary: Pick<Redis, 'info'>) {
    this.#primary = primary
  }

  async list(): Promise<string[]> {
    return parseInfoReplicas(await this.#primary.info('replication'))
  }

  close(): void {}
}

/** The online replicas an INFO replication section lists. */
export function parseInfoReplicas(info: string): string[] {
  return parseInfoReplicaLines(info)
    .filter((replica) => replica.state === 'online')
    .map((replica) => replica.address)
}

/**
 * The replicas Sentinel lists for the master group (SENTINEL REPLICAS <name>), asked of the sentinels in turn
 * (the next one when one fails); replicas Sentinel sees down, or is promoting, are left out.
 */
export class SentinelReplicaAddresses implements ReplicaAddresses {
  readonly #sentinels: ReadonlyArray<{ host?: string; port?: number }>
  readonly #name: string
  readonly #options: Partial<RedisOptions>
  readonly #agentId: string
  readonly #connections: OwnedConnections
  #index = 0
  #connection: Redis | undefined

  constructor(data: RedisOptions, agentId: string, connections: OwnedConnections) {
    this.#sentinels = data.sentinels ?? []
    this.#name = data.name ?? 'mymaster'
    this.#agentId = agentId
    this.#connections = connections
    this.#options = {
      username: data.sentinelUsername,
      password: data.sentinelPassword,
      tls: data.enableTLSForSentinelMode ? data.sentinelTLS : undefined,
    }
  }

  async list(): Promise<string[]> {
    const connection = this.#current()
    try {
      const replicas = (await connection.call('SENTINEL', 'REPLICAS', this.#name)) as string[][]
      return replicas
        .map((flat) => toMap(flat))
        .filter(usable)
        .map((r) => `${r.get('ip')}:${r.get('port')}`)
    } catch (error) {
      // This sentinel is away or does not know the group: the next one is asked next time.
      void this.#connections.close(connection)
      this.#connection = undefined
      this.#index = (this.#index + 1) % Math.max(1, this.#sentinels.length)
      throw error
    }
  }

  close(): void {
    if (this.#connection !== undefined) void this.#connections.close(this.#connection)
    this.#connection = undefined
  }

  #current(): Redis {
    if (this.#connection !== undefined) return this.#connection
    const sentinel = this.#sentinels[this.#index] ?? {}
    this.#connection = this.#connections.add(
      new Redis({
        ...this.#options,
        ...roleOptions('sentinel', this.#agentId, {
          host: sentinel.host ?? 'localhost',
          port: sentinel.port ?? 26379,
          // A sentinel that cannot be reached is left for the next one, not retried.
          retryStrategy: () => null,
        }),
      }),
      'sentinel',
    )
    return this.#connection
  }
}

function toMap(flat: readonly string[]): Map<string, string> {
  const map = new Map<string, string>()
  for (let i = 0; i + 1 < flat.length; i += 2) map.set(flat[i] as string, flat[i + 1] as string)
  return map
}

// Sentinel's own view of a replica's link (master-link-status) is refreshed only every 10 s, so a replica that has
// resynced with a new primary (an old primary back as a replica) would be left out that long: the heartbeat decides
// whether it is fresh enough. The replica a failover is promoting is the primary already.
function usable(replica: Map<string, string>): boolean {
  const flags = (replica.get('flags') ?? '').split(',')
  return !['s_down', 'o_down', 'disconnected', 'promoted'].some((flag) => flags.includes(flag))
}
