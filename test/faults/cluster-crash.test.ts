import { throughEachDoor } from './support/cluster-doors.js'
import { promoted, slotOwners } from './support/cluster-failover.js'

throughEachDoor("kill -9 of the key's Cluster master", async (servers, key) => {
  const { master, replica } = await slotOwners(servers, key)
  await servers.servers.find((server) => server.port === master)?.crash()
  return promoted(replica)
})
