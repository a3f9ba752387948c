import type { Cluster, Redis } from '@heatsink/agent'
import { redeploying, SCENARIO } from './scenario.js'

/**
 * The storefront's cache-aside read of the flags: GET, and on a miss a load and a SET with the flags' TTL.
 * Every reader that misses loads, so a deleted key sends all of them to the database at once.
 */
export function readFlagsCacheAside(redis: Redis | Cluster, query: () => Promise<unknown>): Promise<unknown> {
  const { key, ttlSeconds } = SCENARIO.flags
  return redis.get(key).then(async (cached) => {
    if (cached !== null) return cached
    const loaded = JSON.stringify(await query())
    await redis.set(key, loaded, 'EX', ttlSeconds)
    return loaded
  })
}

/**
 * The flags redeploy's deploy hook (one agent process runs it): during each redeploy, a DEL of the flags every
 * deleteEveryMs. Returns the timer's stop.
 */
export function runFlagsRedeploy(redis: Redis | Cluster, startedAt: number): () => void {
  const timer = setInterval(() => {
    if (redeploying((Date.now() - startedAt) / 1000)) void redis.del(SCENARIO.flags.key).catch(() => {})
  }, SCENARIO.redeploy.deleteEveryMs)
  return () => clearInterval(timer)
}
