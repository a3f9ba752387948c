import { parseInfoReplicaLines } from '@heatsink/protocol'
import { Cluster, type Redis } from 'ioredis'

/** One node as the topology names it. */
export interface TopologyNode {
  /** host:port. */
  readonly node: string
  readonly role: 'master' | 'replica'
  readonly master: string | null
  /** A Cluster master's slot ranges, inclusive; empty elsewhere. */
  readonly slots: ReadonlyArray<readonly [number, number]>
}

/** Every node of the Redis Heatsink talks to. */
export interface Topology {
  readonly kind: 'standalone' | 'sentinel' | 'cluster'
  readonly nodes: readonly TopologyNode[]
}

/**
 * Learns the nodes through `redis`, a connection made by createControlRedis: a Cluster's from CLUSTER NODES (every
 * master and replica, failed ones included so they show as down), a primary's (Sentinel or not) from its own INFO
 * replication, which lists its replicas whatever their state.
 */
export async function discoverTopology(redis: Redis | Cluster): Promise<Topology> {
  if (redis instanceof Cluster) {
    return { kind: 'cluster', nodes: parseClusterNodes(String(await redis.call('CLUSTER', 'NODES'))) }
  }
  const primary = primaryAddress(redis)
  const replicas = parseInfoReplicaLines(await redis.info('replication'))
  return {
    kind: redis.options.sentinels ? 'sentinel' : 'standalone',
    nodes: [
      { node: primary, role: 'master', master: null, slots: [] },
      ...replicas.map((replica) => ({
        node: replica.address,
        role: 'replica' as const,
        master: primary,
        slots: [],
      })),
    ],
  }
}

// Behind Sentinel the options name the sentinels, not the primary: the socket says where the client got to.
function primaryAddress(redis: Redis): string {
  if (redis.options.sentinels) {
    const socket = redis.stream as { remoteAddress?: string; remotePort?: number } | undefined
    if (socket?.remoteAddress === undefined) throw new Error('not connected to the primary yet')
    return `${socket.remoteAddress.replace(/^::ffff:/, '')}:${socket.remotePort}`
  }
  return `${redis.options.host ?? '127.0.0.1'}:${redis.options.port ?? 6379}`
}

/**
 * CLUSTER NODES lines: `<id> <ip:port@cport[,hostname]> <flags> <master-id> <ping> <pong> <epoch> <link> <slot>...`.
 * Nodes without an address yet (handshake, noaddr) are left out.
 */
export function parseClusterNodes(text: string): TopologyNode[] {
  const rows = text
    .split('\n')
    .map((line) => line.trim().split(' '))
    .filter((parts) => parts.length >= 8)
  const addressOf = new Map<string, string>()
  const usable = rows.filter(([, address = '', flags = '']) => {
    const names = flags.split(',')
    return !names.includes('noaddr') && !names.includes('handshake') && !address.startsWith(':')
  })
  for (const [id = '', address = ''] of usable) addressOf.set(id, address.split('@')[0] as string)
  return usable.map(([id = '', , flags = '', masterId = '-', , , , , ...slots]) => {
    const replica = flags.split(',').includes('slave')
    return {
      node: addressOf.get(id) as string,
      role: replica ? 'replica' : 'master',
      master: replica ? (addressOf.get(masterId) ?? null) : null,
      slots: replica ? [] : slots.filter((slot) => /^\d/.test(slot)).map(slotRange),
    }
  })
}

// `0-5460` or `5461`; importing/migrating entries (`[5461->-id]`) are skipped by the caller.
function slotRange(text: string): readonly [number, number] {
  const [from, to = from] = text.split('-').map(Number) as [number, number?]
  return [from, to]
}

/** The node owning `slot`: the master whose ranges hold it (a Cluster), or the one master (otherwise). */
export function ownerOf(topology: Topology, slot: number): string | undefined {
  const masters = topology.nodes.filter((node) => node.role === 'master')
  if (topology.kind !== 'cluster') return masters[0]?.node
  return masters.find((master) => master.slots.some(([from, to]) => slot >= from && slot <= to))?.node
}
