import { Redis as PlainRedis } from 'ioredis'
import { throughEachDoor } from './support/cluster-doors.js'
import { promoted, slotOwners } from './support/cluster-failover.js'

throughEachDoor("CLUSTER FAILOVER on the replica of the key's master", async (servers, key) => {
  const { replica } = await slotOwners(servers, key)
  const admin = new PlainRedis({ host: '127.0.0.1', port: replica })
  await admin.cluster('FAILOVER')
  admin.disconnect()
  return promoted(replica)
})
