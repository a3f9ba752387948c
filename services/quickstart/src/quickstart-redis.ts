import {
  ensureRedis,
  type RedisSentinel,
  type RunningService,
  startRedisSentinel,
} from '@heatsink/devservices'
import { isSentinelUrl, parseSentinelUrl } from '@heatsink/protocol'
import { Redis } from 'ioredis'

/** The Redis a quickstart run uses: one server (found or started), or a private Sentinel deployment. */
export interface QuickstartRedis extends RunningService {
  /** Set in Sentinel mode: the deployment, for the live failover. */
  readonly sentinel?: RedisSentinel
}

/** The master name the quickstart's sentinels monitor. */
export const QUICKSTART_MASTER = 'heatsink-quickstart'

/**
 * Finds or starts the run's Redis. In Sentinel mode it is always private (a primary, 2 replicas, 3 sentinels),
 * since the run fails it over; its URL is the redis+sentinel:// form every component takes.
 * Throws ServiceUnavailableError when no server can be found or started.
 */
export async function startQuickstartRedis(
  sentinel: boolean,
  log: (message: string) => void,
): Promise<QuickstartRedis> {
  if (!sentinel) return ensureRedis({ log })
  const deployment = await startRedisSentinel({
    replicas: 2,
    sentinels: 3,
    masterName: QUICKSTART_MASTER,
    downAfterMs: 2000,
    log,
  })
  const hosts = deployment.sentinels.map(({ host, port }) => `${host}:${port}`).join(',')
  return {
    url: `redis+sentinel://${hosts}/${QUICKSTART_MASTER}`,
    started: true,
    sentinel: deployment,
    stop: () => deployment.stop(),
  }
}

/**
 * A plain ioredis client of `url`, of either form. A Sentinel client leaves the old primary on +switch-master
 * (failoverDetector), so the run's registry subscriber hears the control plane's events on the new one at once.
 */
export function quickstartClient(url: string): Redis {
  return isSentinelUrl(url) ? new Redis({ ...parseSentinelUrl(url), failoverDetector: true }) : new Redis(url)
}
