import type { Cluster, Redis } from 'ioredis'

/** Where the aggregators' consumer group stands on one report stream. */
export interface GroupBacklog {
  /**
   * Entries not yet delivered to any replica (XINFO GROUPS `lag`); null when Redis cannot tell, which happens
   * only after entries were deleted from the middle of the stream (XDEL), something Heatsink never does.
   */
  readonly backlog: number | null
  /** Entries delivered to a replica and not yet acknowledged (XINFO GROUPS `pending`, as XPENDING counts them). */
  readonly pending: number
}

/** Reads the group's backlog on `stream` with one XINFO GROUPS; undefined when the stream or the group is missing. */
export async function readGroupBacklog(
  redis: Redis | Cluster,
  stream: string,
  group: string,
): Promise<GroupBacklog | undefined> {
  let groups: unknown[]
  try {
    groups = (await redis.xinfo('GROUPS', stream)) as unknown[]
  } catch (error) {
    // Before the first replica created the stream, or after Redis lost it: nothing is waiting.
    if (error instanceof Error && /no such key/i.test(error.message)) return undefined
    throw error
  }
  for (const fields of groups) {
    const info = pairs(fields as unknown[])
    if (info.get('name') !== group) continue
    const lag = info.get('lag')
    return {
      backlog: lag === null || lag === undefined ? null : Number(lag),
      pending: Number(info.get('pending')),
    }
  }
  return undefined
}

// XINFO answers each group as a flat list: name, value, name, value...
function pairs(fields: readonly unknown[]): Map<string, unknown> {
  const map = new Map<string, unknown>()
  for (let i = 0; i + 1 < fields.length; i += 2) map.set(String(fields[i]), fields[i + 1])
  return map
}
