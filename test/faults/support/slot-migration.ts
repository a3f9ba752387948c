import type { ClusterNode, RedisCluster } from '@heatsink/devservices'
import { redisClusterSlot } from '@heatsink/protocol'
import { Redis as PlainRedis } from 'ioredis'

/** The master addresses of a migration: where the slot was and where it goes. */
interface Ends {
  readonly source: PlainRedis
  readonly target: PlainRedis
  readonly targetPort: number
}

/**
 * Moves the slot of `key` to another master the way `redis-cli --cluster reshard` moves each of its slots: the
 * target IMPORTING, the source MIGRATING, MIGRATE of the slot's keys in batches (while writers go on writing:
 * a write to a key already moved is answered ASK), then SETSLOT NODE on the target, the source and every other
 * master. Resolves with the moment (performance.now()) the migration began, from which readers are judged.
 */
export async function migrateSlotOf(servers: RedisCluster, key: string): Promise<number> {
  const slot = redisClusterSlot(key)
  const admins = servers.nodes.map((node) => connect(node))
  try {
    const { source, target, targetPort } = await ends(admins, slot)
    const sourceId = await source.cluster('MYID')
    const targetId = await target.cluster('MYID')
    const begunAt = performance.now()
    await target.cluster('SETSLOT', slot, 'IMPORTING', sourceId)
    await source.cluster('SETSLOT', slot, 'MIGRATING', targetId)
    for (;;) {
      const batch = (await source.cluster('GETKEYSINSLOT', slot, 10)) as string[]
      if (batch.length === 0) break
      await source.migrate('127.0.0.1', targetPort, '', 0, 5000, 'KEYS', ...batch)
    }
    // The order redis-cli uses: the target first, so the source's MOVED never points at a node still importing.
    await target.cluster('SETSLOT', slot, 'NODE', targetId)
    await source.cluster('SETSLOT', slot, 'NODE', targetId)
    for (const admin of admins) {
      // Only masters take SETSLOT; replicas learn the move from their masters.
      if (admin === source || admin === target || (await role(admin)) !== 'master') continue
      await admin.cluster('SETSLOT', slot, 'NODE', targetId)
    }
    return begunAt
  } finally {
    for (const admin of admins) admin.disconnect()
  }
}

async function role(admin: PlainRedis): Promise<string> {
  return ((await admin.role()) as string[])[0] ?? ''
}

function connect(node: ClusterNode): PlainRedis {
  const admin = new PlainRedis({ host: node.host, port: node.port })
  admin.on('error', () => {})
  return admin
}

// The slot's master now, and another master to move it to; replicas follow their masters by themselves.
async function ends(admins: readonly PlainRedis[], slot: number): Promise<Ends> {
  const ranges = (await admins[0]?.cluster('SLOTS')) as unknown as [number, number, [string, number]][]
  const owner = ranges.find(([first, last]) => first <= slot && slot <= last)?.[2][1]
  const other = ranges.find(([, , [, port]]) => port !== owner)?.[2][1]
  const byPort = (port: number | undefined) => admins.find((admin) => admin.options.port === port)
  const source = byPort(owner)
  const target = byPort(other)
  if (source === undefined || target === undefined || other === undefined) {
    throw new Error(`no two masters for slot ${slot} in ${JSON.stringify(ranges)}`)
  }
  return { source, target, targetPort: other }
}
