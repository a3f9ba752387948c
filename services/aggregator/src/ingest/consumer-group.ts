import type { Cluster, Redis } from 'ioredis'

/**
 * Creates the consumer group of one report stream, and the stream with it when the key is missing.
 * Resolves `created` when this call made the group, `existed` when it was there already (BUSYGROUP): replicas
 * that find the group missing at the same moment all call this, exactly one creates it, and none fails.
 *
 * The group starts at 0, not $: reports appended before it existed (before the first replica started, or
 * between Redis losing its data and the group coming back) are still read; stale ones are recognised by their
 * window and skipped later.
 */
export async function ensureConsumerGroup(
  redis: Redis | Cluster,
  stream: string,
  group: string,
): Promise<'created' | 'existed'> {
  try {
    await redis.xgroup('CREATE', stream, group, '0', 'MKSTREAM')
    return 'created'
  } catch (error) {
    if (replyCode(error) === 'BUSYGROUP') return 'existed'
    throw error
  }
}

/**
 * True for the error Redis gives a group read or claim when the stream or its group is gone: Redis restarted
 * without persistence, FLUSHALL or FLUSHDB ran, or the stream key was deleted or evicted. (An ack of a missing
 * group just acknowledges nothing.)
 */
export function isMissingGroup(error: unknown): boolean {
  return replyCode(error) === 'NOGROUP'
}

// Redis error replies start with an upper-case code: `NOGROUP No such key 'x' or consumer group 'g' ...`.
function replyCode(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined
  return /^[A-Z]+/.exec(error.message)?.[0]
}
