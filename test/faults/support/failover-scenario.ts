import { randomBytes } from 'node:crypto'
import { publishRegistry } from '@heatsink/agent/testing'
import { createNames } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import { type FailoverFigures, startTraffic, type TrafficClients } from './failover-traffic.js'
import { until } from './until.js'

/** The clients of a scenario, made by the topology's file on a namespace of the scenario's. */
export interface ScenarioClients extends TrafficClients {
  /** Writes the registry (a plain client). */
  readonly admin: Redis | Cluster
  readonly close: () => Promise<void>
}

/** The scenario's clients, the writer also writing the registry; their errors are counted, not printed. */
export function scenarioClients(
  key: string,
  writer: Redis | Cluster,
  plain: Redis | Cluster,
  heatsink: TrafficClients['heatsink'] & (Redis | Cluster),
  secondPlain?: Redis | Cluster,
  alsoClose: () => Promise<void> = async () => {},
): ScenarioClients {
  const all = [writer, plain, heatsink, ...(secondPlain === undefined ? [] : [secondPlain])]
  for (const client of all) client.on('error', () => {})
  return {
    key,
    writer,
    plain,
    heatsink,
    ...(secondPlain !== undefined && { secondPlain }),
    admin: writer,
    close: async () => {
      await Promise.all(all.map((client) => client.quit().catch(() => client.disconnect())))
      await alsoClose()
    },
  }
}

/**
 * How long after a value was read by the plain reader an L1 read may still return an older one: one delivery
 * of the tracking message, bounded at 50 ms as services/proxy/test/stale-window.test.ts bounds it.
 */
export const STALE_BOUND_MS = 50

/** Figures of one failover, with how long a promotion made after it took to reach the agent. */
export interface ScenarioFigures extends FailoverFigures {
  readonly promotionAfterSwitchMs: number
}

/**
 * Runs one failover under traffic: `key` promoted to local_cache and served from L1, then `failover()`, whose
 * promise gives when the new primary became known (performance.now()); traffic goes on until L1 serves again
 * and the plain reader has read on, then a second key is promoted and must reach the agent.
 */
export async function failoverUnderTraffic(
  open: (key: string, namespace: string) => ScenarioClients | Promise<ScenarioClients>,
  failover: (key: string) => Promise<number>,
): Promise<ScenarioFigures> {
  const namespace = `failover-${randomBytes(4).toString('hex')}`
  const key = `{${namespace}}:counter`
  const clients = await open(key, namespace)
  try {
    const { heatsink, admin } = clients
    const stats = () => heatsink.heatsink.stats()
    const names = createNames(namespace)
    await clients.writer.incr(key)
    await publishRegistry(admin, names, { key })
    await until('the promotion', () => heatsink.heatsink.mitigation(key) === 'local_cache', 10_000)
    const traffic = startTraffic(clients)
    // A second of traffic before the switch: the staleness every client-side cache has, for comparison.
    const trafficFrom = performance.now()
    await until('L1 serving', () => stats().l1Hits > 50 && performance.now() > trafficFrom + 1000, 10_000)
    const switchedAt = await failover(key)
    // Watched for 3 s after the switch (Sentinel reconfigures the old primary about a second after it), and
    // until the agent's channels are up and L1 has answered 500 more reads.
    const hitsAtSwitch = stats().l1Hits
    await until(
      'L1 serving on the new primary',
      () =>
        performance.now() > switchedAt + 3000 &&
        stats().invalidationChannelUp &&
        stats().l1Hits > hitsAtSwitch + 500,
      15_000,
    )
    const figures = await traffic.stop(switchedAt)

    const later = `{${namespace}}:later`
    await clients.writer.incr(later)
    const promotedAt = performance.now()
    await publishRegistry(admin, names, { key: later })
    await until('the promotion after the switch', () => heatsink.heatsink.mitigation(later) === 'local_cache')
    return { ...figures, promotionAfterSwitchMs: Math.round(performance.now() - promotedAt) }
  } finally {
    await clients.close()
  }
}
