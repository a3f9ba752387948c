import type { HeatsinkNames } from '@heatsink/protocol'
import type { Redis } from 'ioredis'

/**
 * The cluster-wide count of each key in one window as the aggregators summed it in Redis (counter shard 0: the
 * suite runs with HEATSINK_COUNTER_SHARDS=1). Field `\n<key>` of the window's counters hash, see applyReport-1.lua.
 */
export async function windowSums(
  redis: Redis,
  names: HeatsinkNames,
  windowStart: number,
  keys: readonly string[],
): Promise<number[]> {
  const values = await redis.hmget(names.windowCountersKey(windowStart, 0), ...keys.map((key) => `\n${key}`))
  return values.map((value) => Number(value ?? 0))
}

/** Entries read but not yet acknowledged, over every report stream of the namespace. */
export async function pendingReports(redis: Redis, names: HeatsinkNames): Promise<number> {
  let pending = 0
  for (const stream of names.reportStreams) {
    const summary = (await redis.xpending(stream, names.consumerGroup).catch(() => [0])) as [number]
    pending += Number(summary[0])
  }
  return pending
}

/** Pending entries held by one consumer (replica), over every report stream. */
export async function pendingFor(redis: Redis, names: HeatsinkNames, consumer: string): Promise<number> {
  let pending = 0
  for (const stream of names.reportStreams) {
    const summary = (await redis.xpending(stream, names.consumerGroup).catch(() => [0, null, null, []])) as [
      number,
      string | null,
      string | null,
      Array<[string, string]> | null,
    ]
    for (const [name, count] of summary[3] ?? []) if (name === consumer) pending += Number(count)
  }
  return pending
}
