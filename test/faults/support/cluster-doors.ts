import type { RedisCluster } from '@heatsink/devservices'
import { describe, expect, it } from 'vitest'
import { clientsOn, useClusterPerTest } from './cluster-failover.js'
import { failoverUnderTraffic, type ScenarioFigures, STALE_BOUND_MS } from './failover-scenario.js'
import { proxyClientsOn } from './proxy-on-cluster.js'

/** The two ways in to a Redis Cluster that each Cluster fault scenario runs through, with their clients. */
export const clusterDoors = [
  ['the drop-in (Cluster front door)', clientsOn],
  ['the proxy on a Cluster backend', proxyClientsOn],
] as const

/**
 * What every door must keep through a Cluster fault, so that Heatsink is never worse than the plain client: no read staler than the plain reader's (within one
 * tracking message), no more errors than it (give or take the attempt the outage ended in), L1 back within 1 s, a promotion made after the switch reaching the
 * agent within 1 s, and the writer's INCRs (through the proxy, for the proxy) answered again within 1 s.
 */
export function expectAsFreshAsPlain(figures: ScenarioFigures): void {
  expect(figures.maxStaleMsAfterSwitch).toBeLessThan(STALE_BOUND_MS)
  // The readers loop side by side, not in step: an outage's errors come one per attempt, so where the outage
  // ends between two attempts of each reader one of them makes one more. More than that is Heatsink's own. (The
  // errors' texts are printed, not compared: through the proxy they are the proxy's, by design.)
  expect(figures.heatsinkErrors).toBeLessThanOrEqual(figures.plainErrors + 1)
  expect(figures.l1BackMs).toBeLessThan(1000)
  expect(figures.promotionAfterSwitchMs).toBeLessThan(1000)
  expect(figures.writesResumedMs).toBeLessThan(1000)
}

/**
 * One Cluster fault (`fault` resolves with when the new owner of the key's slot became known) under traffic,
 * through each door on a fresh 3-master Cluster, printing `name`'s figures and asserting expectAsFreshAsPlain and
 * `more`.
 */
export function throughEachDoor(
  name: string,
  fault: (servers: RedisCluster, key: string) => Promise<number>,
  more: (figures: ScenarioFigures) => void = () => {},
): void {
  const newCluster = useClusterPerTest()
  describe(`${name}, beside a plain ioredis reader`, () => {
    it.each(clusterDoors)(
      'through %s: no read staler than plain, no more errors, L1 back within 1 s, writes and promotions go on',
      async (door, clients) => {
        const servers = await newCluster()
        const figures = await failoverUnderTraffic(clients(servers), (key) => fault(servers, key))
        console.log(`${name} through ${door}`, JSON.stringify(figures))
        expectAsFreshAsPlain(figures)
        more(figures)
      },
      30_000,
    )
  })
}
